"""The output cache (python/src/block_cache.cc, docs/python.md): large PyTorch outputs come from
blocks that serve the next output of their size once their tensor is freed, never a block a
live tensor holds; the limit (0: off) and empty_cache release blocks; results do not depend on
whether a block was reused."""

import pytest
import torch

import aclnn_cpu
import aclnn_cpu.torch as at


@pytest.fixture(autouse=True)
def fresh_cache():
    limit = aclnn_cpu.cache_info().limit
    aclnn_cpu.empty_cache()
    yield
    aclnn_cpu.set_cache_limit(limit)
    aclnn_cpu.empty_cache()


def _step(x, t, **kw):
    xx = x.clone().requires_grad_()
    at.cross_entropy(xx, t, **kw).backward()
    return xx.grad


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64])
def test_a_freed_gradient_block_serves_the_next_step(dtype):
    x = torch.randn(4, 8, 128, 128).to(dtype)  # a gradient of at least 1 MiB
    t = torch.randint(0, 8, (4, 128, 128))
    first = _step(x, t)
    ptr, want = first.data_ptr(), first.clone()
    hits = aclnn_cpu.cache_info().hits
    del first
    assert aclnn_cpu.cache_info().cached_bytes >= want.numel() * want.element_size()
    again = _step(x, t)
    assert again.data_ptr() == ptr and aclnn_cpu.cache_info().hits == hits + 1
    assert again.dtype == dtype and again.shape == x.shape and again.is_contiguous()
    assert torch.equal(again, want)


def test_a_live_tensor_keeps_its_block():
    x, t = torch.randn(256, 2048), torch.randint(0, 2048, (256,))
    kept = _step(x, t, lean=True)
    other = _step(x, t, lean=True)
    assert other.data_ptr() != kept.data_ptr()
    assert torch.equal(kept, other)
    view = kept[1:]  # a view holds the block too
    del kept
    third = _step(x, t, lean=True)
    assert third.data_ptr() != view.data_ptr() - view.element_size() * view.stride(0)


def test_limit_zero_turns_it_off_and_empty_cache_releases():
    x, t = torch.randn(256, 2048), torch.randint(0, 2048, (256,))
    g = _step(x, t, lean=True)
    del g
    assert aclnn_cpu.cache_info().cached_bytes > 0
    aclnn_cpu.empty_cache()
    assert aclnn_cpu.cache_info().cached_bytes == 0
    aclnn_cpu.set_cache_limit(0)
    info = aclnn_cpu.cache_info()
    g = _step(x, t, lean=True)
    del g
    after = aclnn_cpu.cache_info()
    assert after.cached_bytes == 0 and (after.hits, after.misses) == (info.hits, info.misses)
    with pytest.raises(ValueError, match="bytes >= 0"):
        aclnn_cpu.set_cache_limit(-1)


def test_small_outputs_and_numpy_arrays_are_not_cached():
    import numpy as np
    info = aclnn_cpu.cache_info()
    aclnn_cpu.log_softmax(torch.randn(8, 16))
    aclnn_cpu.log_softmax(np.random.rand(512, 1024).astype(np.float32))
    after = aclnn_cpu.cache_info()
    assert (after.hits, after.misses) == (info.hits, info.misses)
