#include "problem.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

namespace driver {

namespace {

const std::map<std::string, const optable::OpSpec*>& OpNames() {
  static const std::map<std::string, const optable::OpSpec*> m = [] {
    std::map<std::string, const optable::OpSpec*> names;
    for (const optable::OpSpec* op : optable::Ops()) {
      names[op->name] = op;
      names[op->alias] = op;
    }
    return names;
  }();
  return m;
}

// The table's dtype names, floating (for --dtype) or not (class indices, --target-dtype).
std::map<std::string, aclDataType> DtypesNamed(bool floating) {
  std::map<std::string, aclDataType> m;
  for (const optable::DtypeNameEntry& e : optable::DtypeNames()) {
    if (e.floating == floating) m[e.name] = e.dtype;
  }
  return m;
}
const std::map<std::string, aclDataType>& FloatDtypes() {
  static const std::map<std::string, aclDataType> m = DtypesNamed(true);
  return m;
}
const std::map<std::string, aclDataType>& TargetDtypes() {
  static const std::map<std::string, aclDataType> m = DtypesNamed(false);
  return m;
}

// "4096x32000", "1", or "scalar" (rank 0).
std::string ParseShape(const std::string& s, std::vector<int64_t>* shape) {
  shape->clear();
  if (s == "scalar") return "";
  const std::string bad = "--shape " + s +
                          ": dims are non-negative integers joined by 'x' (e.g. 4096x32000), "
                          "or 'scalar'.";
  if (s.empty() || s.back() == 'x') return bad;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, 'x')) {
    size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(part, &used);
    } catch (...) {
      used = 0;
    }
    if (part.empty() || used != part.size() || v < 0) return bad;
    shape->push_back(v);
  }
  if (shape->size() > 8) return "--shape " + s + ": rank must be 1 to 8.";
  return "";
}

const std::map<std::string, testing_support::Layout>& Layouts() {
  static const std::map<std::string, testing_support::Layout> m = [] {
    std::map<std::string, testing_support::Layout> names;
    for (testing_support::Layout l : testing_support::kAllLayouts) {
      names[testing_support::LayoutName(l)] = l;
    }
    return names;
  }();
  return m;
}

std::string OpHelp() {
  std::string s = "operator:";
  for (const optable::OpSpec* op : optable::Ops()) {
    s += std::string(" ") + op->name + " (" + op->alias + ")";
  }
  return s;
}

// "shape ranks: log_softmax_backward 0-8, ..., cross_entropy_loss 2 (NxC)", from the table.
std::string ShapeHelp() {
  std::string s = "dims joined by 'x', 'scalar' for 0-d; ranks:";
  for (const optable::OpSpec* op : optable::Ops()) {
    s += std::string(" ") + op->alias + " " + std::to_string(op->min_rank);
    if (op->max_rank != op->min_rank) s += "-" + std::to_string(op->max_rank);
    if (*op->shape_hint) s += std::string(" (") + op->shape_hint + ")";
  }
  return s;
}

// "input dtype: lsm_bwd f32 f16 bf16; ...", from the table.
std::string DtypeHelp() {
  std::string s = "input dtype:";
  for (const optable::OpSpec* op : optable::Ops()) {
    s += std::string(op == optable::Ops().front() ? " " : "; ") + op->alias;
    for (aclDataType t : op->dtypes) s += std::string(" ") + optable::DtypeShortName(t);
  }
  return s;
}

// `help` and the operators that take attribute a, from the table.
std::string AttrHelp(const std::string& help, optable::Attr a) {
  std::string ops;
  for (const optable::OpSpec* op : optable::Ops()) {
    if (std::find(op->attrs.begin(), op->attrs.end(), a) != op->attrs.end()) {
      ops += (ops.empty() ? "" : ", ") + std::string(op->alias);
    }
  }
  return help + " [" + ops + "]";
}

}  // namespace

// An option whose value is one of the names in `names` (case-insensitive).
template <typename T>
CLI::Option* AddNamed(CLI::App& app, const std::string& flag, T& out,
                      const std::map<std::string, T>& names, const std::string& help,
                      const std::string& type) {
  return app
      .add_option_function<std::string>(
          flag,
          [flag, &out, &names](const std::string& value) {
            std::string key = value;
            for (char& ch : key)
              ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
            const auto it = names.find(key);
            if (it == names.end()) {
              std::string known;
              for (const auto& kv : names) known += (known.empty() ? "" : ", ") + kv.first;
              throw CLI::ValidationError(flag + " " + value + " is not one of: " + known + ".");
            }
            out = it->second;
          },
          help)
      ->type_name(type);
}

void AddProblemOptions(CLI::App& app, Problem& p) {
  AddNamed(app, "--op", p.op, OpNames(), OpHelp(), "OP");
  app.add_option_function<std::string>(
         "--shape",
         [&p](const std::string& s) {
           const std::string err = ParseShape(s, &p.shape);
           if (!err.empty()) throw CLI::ValidationError(err);
         },
         ShapeHelp())
      ->type_name("SHAPE");
  using optable::Attr;
  AddNamed(app, "--dtype", p.dtype, FloatDtypes(), DtypeHelp(), "DTYPE");
  AddNamed(app, "--out-dtype", p.out_dtype, FloatDtypes(),
           AttrHelp("output dtype (default: --dtype)", Attr::kOutDtype), "DTYPE");
  AddNamed(app, "--target-dtype", p.target_dtype, TargetDtypes(),
           AttrHelp("class-index dtype: s64 s32", Attr::kTargetDtype), "DTYPE");
  app.add_option("--dim", p.dim, AttrHelp("reduction dim", Attr::kDim));
  app.add_option("--reduction", p.reduction, AttrHelp("none, mean or sum", Attr::kReduction))
      ->check(CLI::IsMember({"none", "mean", "sum"}));
  app.add_flag("--weight,!--no-weight", p.weight,
               AttrHelp("per-class weights (uniform in [0.5, 2))", Attr::kWeight));
  app.add_option("--ignore-index", p.ignore_index,
                 AttrHelp("ignoreIndex (one row in seven gets it)", Attr::kIgnoreIndex));
  app.add_option("--label-smoothing", p.label_smoothing,
                 AttrHelp("labelSmoothing in [0, 1]", Attr::kLabelSmoothing));
  app.add_option("--zloss", p.zloss,
                 AttrHelp("lseSquareScaleForZloss (z-loss on when non-zero)", Attr::kZloss));
  app.add_option("--target-length", p.target_length,
                 "the class-index tensor's length (default N): a mismatch to see it refused")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  AddNamed(app, "--layout", p.layout, Layouts(),
           "every tensor: contiguous, transposed (reversed strides), offset (storage "
           "offset 7), padded (strides of a larger tensor plus offset)",
           "LAYOUT");
  app.add_option("--threads", p.threads, "threads (default: ACLNN_CPU_NUM_THREADS or all cores)")
      ->check(CLI::Range(0, 4096));
  app.add_option("--cpu-target", p.target,
                 "run on this Highway target (e.g. AVX3, AVX2, SSE4, SCALAR); default: the best");
  app.add_option("--seed", p.seed, "random data seed");
}

bool IsProblemOption(const std::string& flag) {
  CLI::App app("problem");
  Problem p;
  AddProblemOptions(app, p);
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_name() == flag) return true;
  }
  return false;
}

std::string Validate(const Problem& p) {
  const optable::OpSpec& op = *p.op;
  const int rank = static_cast<int>(p.shape.size());
  if (rank < op.min_rank || rank > op.max_rank) {
    const std::string shape = optable::ShapeText(p.shape);
    if (op.min_rank == op.max_rank) {
      return std::string("--op ") + op.name + " needs a " + std::to_string(op.min_rank) +
             "-D --shape " + op.shape_hint + ", not " + shape + ".";
    }
    return std::string("--op ") + op.name + " needs a --shape of rank " +
           std::to_string(op.min_rank) + " to " + std::to_string(op.max_rank) + ", not " + shape +
           ".";
  }
  if (std::find(op.dtypes.begin(), op.dtypes.end(), p.dtype) == op.dtypes.end()) {
    std::string list;
    for (size_t i = 0; i < op.dtypes.size(); ++i) {
      list += (i == 0 ? "" : (i + 1 == op.dtypes.size() ? " or " : ", "));
      list += optable::DtypeShortName(op.dtypes[i]);
    }
    return std::string("--op ") + op.name + " takes --dtype " + list + ".";
  }
  if (p.target_length >= 0 && !p.Takes(optable::Attr::kTargetDtype)) {
    return std::string("--op ") + op.name + " has no class-index tensor for --target-length.";
  }
  return "";
}

std::string Problem::ToString() const {
  std::string s = optable::Problem::ToString();
  if (threads > 0) s += " --threads=" + std::to_string(threads);
  if (!target.empty()) s += " --cpu-target=" + target;
  return s;
}

std::string ParseLine(const std::string& line, Problem* p) {
  *p = Problem{};
  CLI::App app("problem");
  AddProblemOptions(app, *p);
  try {
    app.parse(line, false);
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return Validate(*p);
}

}  // namespace driver
