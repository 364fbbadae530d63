"""SoC profiles from Python (docs/soc_profiles.md): aclnn_cpu.set_soc makes the operators follow
an Ascend NPU's rules; the C++ suite (tests/ops/soc_profiles_test.cc) has the full tables."""

import subprocess
import sys

import numpy as np
import pytest
import torch

import aclnn_cpu as ac
import aclnn_cpu.torch as at

CANARY = 12345.0


@pytest.fixture
def soc():
    """Selects a profile for one test, then the default again."""
    yield ac.set_soc
    ac.set_soc(None)


def problem(n=6, c=5, target_dtype=np.int64):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((n, c)).astype(np.float32)
    t = rng.integers(0, c, n).astype(target_dtype)
    return x, t


def test_default_and_selection(soc):
    assert ac.soc_name() == "aclnn-cpu"
    soc("Ascend910B2")
    assert ac.soc_name() == "Ascend910B2"
    with pytest.raises(ac.AclnnValueError) as e:
        soc("Ascend999")
    assert e.value.status == 100000
    assert "is not a known SoC; known: Ascend910B1..Ascend910B4" in str(e.value)
    assert ac.soc_name() == "Ascend910B2"
    soc(None)
    assert ac.soc_name() == "aclnn-cpu"


def test_910b_refusals_leave_outputs_untouched(soc):
    x, t = problem()
    lp = ac.log_softmax(x)
    out = np.full_like(x, CANARY)
    soc("Ascend910B2")
    with pytest.raises(ac.AclnnTypeError, match="INT64 targets only") as e:
        ac.cross_entropy_loss_grad(1.0, lp, t.astype(np.int32), out=out)
    assert e.value.status == 161002
    with pytest.raises(ac.AclnnError, match="labelSmoothing 0.1 is not implemented on Ascend910B2"):
        ac.cross_entropy_loss_grad(1.0, lp, t, label_smoothing=0.1, out=out)
    with pytest.raises(ac.AclnnValueError, match="target has shape") as e:
        ac.cross_entropy_loss_grad(1.0, lp, t[:5], out=out)
    assert e.value.status == 561002
    assert (out == CANARY).all()


def test_950_negative_ignore_index_masks_nothing(soc):
    x, t = problem()
    t[2] = -100
    lp = ac.log_softmax(x)
    ac.cross_entropy_loss_grad(1.0, lp, t)  # the default ignores row 2
    soc("Ascend950PR")
    out = np.full_like(x, CANARY)
    with pytest.raises(ac.AclnnValueError, match="negative ignoreIndex masks no row"):
        ac.cross_entropy_loss_grad(1.0, lp, t, out=out)
    assert (out == CANARY).all()


def test_910_has_no_cross_entropy(soc):
    x, t = problem()
    soc("Ascend310P3")
    with pytest.raises(ac.AclnnError, match="does not exist on Ascend310P3") as e:
        ac.cross_entropy_loss(x, t)
    assert e.value.status == 561003
    ac.log_softmax(x)  # float32 log-softmax exists there


def test_unwritten_outputs_come_back_as_none(soc):
    # Regression: with z_loss_scale 0 the z-loss output came back (uninitialized) although a
    # profile that ignores the z-loss never writes it.
    x, t = problem()
    assert ac.cross_entropy_loss(x, t, return_z_loss=True).z_loss == 0.0
    soc("Ascend910B2")
    for z in (0.0, 0.5):
        r = ac.cross_entropy_loss(x, t, return_z_loss=True, z_loss_scale=z)
        assert r.z_loss is None and r.lse is None


def test_torch_zloss_ignored_like_the_npu(soc):
    x, t = problem()
    xt = torch.from_numpy(x)
    expected = at.cross_entropy(xt, torch.from_numpy(t))  # no z-loss, default profile
    soc("Ascend910B2")
    x1 = xt.clone().requires_grad_()
    loss, z = at.cross_entropy(x1, torch.from_numpy(t), z_loss_scale=1e-2, return_z_loss=True)
    loss.backward()
    assert torch.equal(loss, expected)
    assert z.item() == 0.0
    x2 = xt.clone().requires_grad_()
    soc(None)
    at.cross_entropy(x2, torch.from_numpy(t)).backward()
    assert torch.equal(x1.grad, x2.grad)


def test_environment_variable_at_import():
    code = "import aclnn_cpu as ac; print(ac.soc_name())"
    env = {"ACLNN_CPU_SOC": "Ascend950PR", "PATH": "/usr/bin:/bin"}
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "Ascend950PR"
    env["ACLNN_CPU_SOC"] = "Ascend999"
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode != 0
    assert 'ACLNN_CPU_SOC="Ascend999" is not a known SoC' in r.stderr
