// Every operator of the table gives the same bits for any thread count, on problems that take
// each path: rows, split rows (fewer rows than threads), column tiles (operators of any rank),
// gather (padded layout), every option of the operator on, every floating dtype it takes.
#include <gtest/gtest.h>

#include <vector>

#include "call.h"
#include "runtime/parallel.h"

using optable::Call;
using optable::Problem;

namespace {

// Runs the call for 1..4 threads and compares every output's bits with the first run.
void ExpectSameForAnyThreads(Call& c) {
  SCOPED_TRACE(c.problem().ToString());
  std::vector<double> first;
  for (int threads : {1, 2, 3, 4}) {
    aclnn_cpu::SetNumThreads(threads);
    const optable::RunResult r = c.Run();
    ASSERT_EQ(r.status, 0) << r.message;
    const std::vector<double> out = c.Outputs();
    if (threads == 1) {
      first = out;
      continue;
    }
    ASSERT_EQ(out.size(), first.size());
    for (size_t i = 0; i < out.size(); ++i) {
      ASSERT_TRUE(out[i] == first[i] || (out[i] != out[i] && first[i] != first[i]))
          << "element " << i << " differs with " << threads << " threads";
    }
  }
  aclnn_cpu::SetNumThreads(0);
}

// The problems of one operator and dtype: each path, every option on.
std::vector<Problem> PathProblems(const optable::OpSpec* op, aclDataType dt) {
  struct Shape {
    std::vector<int64_t> shape;
    int64_t dim;
    testing_support::Layout layout;
  };
  std::vector<Shape> shapes = {{{64, 3000}, -1, testing_support::Layout::kContiguous},
                               {{1, 70000}, -1, testing_support::Layout::kContiguous},
                               {{3, 40000}, 1, testing_support::Layout::kContiguous},
                               {{40, 500}, 1, testing_support::Layout::kPadded}};
  if (op->max_rank >= 3) {
    shapes.push_back({{8, 300, 96}, 1, testing_support::Layout::kContiguous});
    shapes.push_back({{300, 50}, 0, testing_support::Layout::kContiguous});
  }
  std::vector<Problem> v;
  for (const Shape& s : shapes) {
    Problem p = op->all_options(optable::DefaultProblem(op));
    p.dtype = dt;
    p.shape = s.shape;
    p.dim = s.dim;
    p.layout = s.layout;
    v.push_back(p);
  }
  return v;
}

}  // namespace

TEST(Determinism, EveryOperatorAnyThreadCount) {
  int problems = 0;
  for (const optable::OpSpec* op : optable::Ops()) {
    for (aclDataType dt : {ACL_FLOAT, ACL_BF16, ACL_FLOAT16}) {
      for (const Problem& p : PathProblems(op, dt)) {
        Call c(p);
        c.FillRandom(/*keep_values=*/false);
        ExpectSameForAnyThreads(c);
        ++problems;
      }
    }
  }
  EXPECT_GE(problems, 4 * 3 * 4);
}
