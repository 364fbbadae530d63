// The operator table itself, and what it gives every operator without a line of its own: the
// entries are consistent; every operator matches its reference for every dtype it takes, every
// layout, with and without its options, on every target, writing nothing outside its views; a
// missing required tensor is refused with a message naming the operator and the parameter, and
// nothing is written.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "call.h"

using optable::Call;
using optable::OpSpec;
using optable::Problem;

TEST(OpTable, EntriesAreConsistent) {
  std::set<std::string> names;
  for (const OpSpec* op : optable::Ops()) {
    SCOPED_TRACE(op->name);
    EXPECT_TRUE(names.insert(op->name).second);
    EXPECT_TRUE(names.insert(op->alias).second);
    EXPECT_EQ(optable::FindOp(op->name), op);
    EXPECT_EQ(optable::FindOp(op->alias), op);
    EXPECT_EQ(std::string(op->api).rfind("aclnn", 0), 0u);
    EXPECT_LE(op->min_rank, op->max_rank);
    EXPECT_FALSE(op->dtypes.empty());
    const Problem p = op->all_options(optable::DefaultProblem(op));
    const std::vector<optable::TensorDecl> decls = op->declare(p);
    ASSERT_EQ(decls.size(), op->params.size());
    for (size_t i = 0; i < decls.size(); ++i) {
      EXPECT_TRUE(decls[i].present || op->params[i].optional) << op->params[i].name;
    }
    EXPECT_FALSE(op->bench_problems(op).empty());
  }
  EXPECT_EQ(optable::FindOp("no_such_operator"), nullptr);
}

namespace {

std::vector<Problem> AccuracyProblems(const OpSpec* op) {
  std::vector<Problem> v;
  for (aclDataType dt : op->dtypes) {
    for (testing_support::Layout l : testing_support::kAllLayouts) {
      for (bool all : {false, true}) {
        Problem p = optable::DefaultProblem(op);
        if (all) p = op->all_options(p);
        p.dtype = dt;
        p.layout = l;
        p.shape = {5, 37};
        v.push_back(p);
        if (op->max_rank >= 3) {
          p.shape = {3, 5, 7};
          p.dim = 1;
          v.push_back(p);
        }
      }
    }
  }
  return v;
}

}  // namespace

TEST(OpTable, EveryOperatorMatchesItsReferenceEverywhere) {
  int checked = 0;
  for (const OpSpec* op : optable::Ops()) {
    for (const Problem& p : AccuracyProblems(op)) {
      SCOPED_TRACE(p.ToString());
      Call c(p);
      c.FillRandom();
      testing_support::ForEachTarget([&](const std::string& target) {
        SCOPED_TRACE(target);
        const optable::RunResult r = c.Run();
        ASSERT_EQ(r.status, 0) << r.message;
        for (const optable::Verdict& v : c.Check()) {
          EXPECT_TRUE(v.failure.empty()) << v.output << ": " << v.failure;
          ++checked;
        }
        for (size_t i = 0; i < c.size(); ++i) {
          if (c.tensor(i) != nullptr) {
            EXPECT_TRUE(c.tensor(i)->CanariesOutsideViewIntact()) << c.param(i).name;
          }
        }
      });
    }
  }
  std::printf("op table: %d outputs checked against the reference\n", checked);
}

TEST(OpTable, AMissingRequiredTensorIsRefusedAndNothingIsWritten) {
  for (const OpSpec* op : optable::Ops()) {
    const Problem p = op->all_options(optable::DefaultProblem(op));
    Call c(p);
    c.FillRandom();
    for (size_t missing = 0; missing < c.size(); ++missing) {
      if (op->params[missing].optional) continue;
      SCOPED_TRACE(std::string(op->name) + " without " + op->params[missing].name);
      std::vector<aclTensor*> t(c.size(), nullptr);
      for (size_t i = 0; i < c.size(); ++i) {
        if (i != missing && c.tensor(i) != nullptr) t[i] = c.tensor(i)->get();
      }
      std::string reduction = p.reduction;
      uint64_t ws = 0;
      aclOpExecutor* ex = nullptr;
      EXPECT_EQ(op->phase1(p.Args(t.data(), &reduction[0]), &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
      const std::string m = aclGetRecentErrMsg();
      EXPECT_NE(m.find(std::string(op->api) + ": " + op->params[missing].name + " is null"),
                std::string::npos)
          << m;
      EXPECT_TRUE(c.OutputsUntouched());
    }
  }
}
