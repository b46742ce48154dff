#pragma once
// `board completion bash|zsh|fish`.

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>

namespace board::cli {

/// The shells `completion_script` writes for, in the order `board completion --help` names them.
inline constexpr std::string_view completion_shells[] = {"bash", "zsh", "fish"};

/// A completion script for `shell` (one of completion_shells) made from the command table
/// itself, so it never falls behind a new command or flag. Where an argument is a ticket id
/// the script asks the board (`board list --all --json`), a question id likewise (`board
/// questions --pending --json`); statuses, awaiting kinds, ticket and event types come from
/// the reducer's own spellings. Where a value is free text nothing is offered: never a file
/// name where an id or a word is expected.
std::string completion_script(const CLI::App& app, std::string_view shell);

}  // namespace board::cli
