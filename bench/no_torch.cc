// Built when libtorch is not found: the PyTorch columns are left out.
#include "ops_bench.h"

namespace bench {
bool HavePyTorch(const optable::Problem&) { return false; }
void RunPyTorch(benchmark::State& state, const optable::Problem&, int) {
  state.SkipWithError("no libtorch");
}
}  // namespace bench
