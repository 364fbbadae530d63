"""PyTorch integration: custom operators (``torch.ops.aclnn_cpu.*``) with fake implementations
and autograd, and drop-in ``cross_entropy`` / ``CrossEntropyLoss`` / ``log_softmax``.

The operators are registered with ``torch.library.custom_op``: ``torch.compile`` sees them as
opaque calls (their fake implementations give the output shapes), the backward of each forward
runs the library's gradient operator, and ``torch.library.opcheck`` passes on all of them. They
run on CPU tensors only; anything the library does not support raises ``NotImplementedError``
naming the limit instead of falling back to PyTorch.

The package is one module per concern: _operators (the custom operators and their fakes),
_autograd, _functional (the drop-in functions), _modules (CrossEntropyLoss), _linear (the fused
linear cross-entropy), _distributed (the vocabulary-parallel cross-entropy), _install
(install(): the library behind PyTorch's own operators), _common.
"""

from ._functional import cross_entropy, log_softmax
from ._linear import linear_cross_entropy
from ._modules import CrossEntropyLoss
from ._distributed import vocab_parallel_cross_entropy
from ._install import (install, is_installed, reset_routing_counts, routing_counts, set_verbose,
                       uninstall)

__all__ = ["cross_entropy", "CrossEntropyLoss", "linear_cross_entropy", "log_softmax",
           "vocab_parallel_cross_entropy", "install", "uninstall", "is_installed",
           "routing_counts", "reset_routing_counts", "set_verbose"]
