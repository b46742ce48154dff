#pragma once
// `board completion bash`.

#include <CLI/CLI.hpp>
#include <string>

namespace board::cli {

/// A completion script made from the command table itself, so it never falls behind a new
/// command or flag. Ticket ids come from the board's tickets/.
std::string bash_completion(const CLI::App& app);

}  // namespace board::cli
