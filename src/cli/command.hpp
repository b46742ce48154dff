#pragma once
// The `board` command table. Each command is one row: its name, one line of help, and a
// function that declares its arguments on a CLI11 subcommand and returns what runs it once the
// command line is parsed. main.cpp builds only the row the command line names (or every row,
// for `--help` and completion), so the table is the one list of commands there is.

#include "cli/session.hpp"

#include <CLI/CLI.hpp>
#include <functional>
#include <span>
#include <string_view>

namespace board::cli {

/// Runs a parsed command; returns the exit code.
using Run = std::function<int(const GlobalOptions&)>;

struct Command {
    std::string_view name;
    std::string_view summary;
    Run (*declare)(CLI::App& sub);
};

/// Commands that read: show, list, next, ready, questions, verify, doctor.
std::span<const Command> reading_commands();
/// Commands that read history: log, replay, why, runs, run, diff, stats.
std::span<const Command> history_commands();
/// Commands that write: init, create, the human moves, fork, import-ticks.
std::span<const Command> writing_commands();

/// `--until`, `--at`: a seq, 1 or more. An error sentence, or empty.
std::string a_seq(const std::string& text);

/// Lines joined with newlines, each ending in one (for help footers).
std::string join_lines(std::initializer_list<std::string_view> lines);

}  // namespace board::cli
