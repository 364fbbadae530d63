// A driver problem: an operator problem of the table (optable::Problem) plus how to run it
// (threads, CPU target), described by command-line options. The same options parse from the
// command line, from a line of a --batch file, and from a --dump directory's problem.json;
// ToString() gives the canonical form back. The operators, their names and the attributes each
// takes come from the operator table; nothing here lists them.
#ifndef ACLNN_CPU_DRIVER_PROBLEM_H_
#define ACLNN_CPU_DRIVER_PROBLEM_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "op_table.h"

namespace driver {

struct Problem : optable::Problem {
  int threads = 0;     // 0: the library's default
  std::string target;  // Highway target cap ("" = best available)

  Problem() { op = optable::Ops().front(); }
  std::string ToString() const;
};

// Registers the problem options on `app`, writing into `p`.
void AddProblemOptions(CLI::App& app, Problem& p);
// Whether `flag` (e.g. "--shape") is one of the options AddProblemOptions registers.
bool IsProblemOption(const std::string& flag);
// Checks what the options alone cannot (the operator's ranks and dtypes); "" or one sentence.
std::string Validate(const Problem& p);
// Parses one problem line (a --batch line, or problem.json's "problem"); "" or the error.
std::string ParseLine(const std::string& line, Problem* p);

}  // namespace driver

#endif  // ACLNN_CPU_DRIVER_PROBLEM_H_
