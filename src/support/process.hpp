#pragma once
// The one way a short helper program (git, an agent's `--version`) is run and its output
// read, outside the daemon's event loop: an argv list, never a shell, in a process group of
// its own, with a deadline.

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace board {

struct Captured {
    int exit_code = -1;  ///< -1: could not start, or did not finish in time
    std::string output;  ///< stdout and stderr as printed, at most `max_output` bytes of them
};

/// Runs `argv` (argv[0] looked up on PATH unless it holds a `/`) with stdin on /dev/null and
/// no descriptor of ours, for at most `limit`; past it the whole group is killed. Output past
/// `max_output` is read and dropped, so a chatty program never blocks on a full pipe.
Captured run_captured(const std::vector<std::string>& argv,
                      std::chrono::milliseconds limit,
                      std::size_t max_output = 64u << 10);

/// `git -C DIR ARGS` with the repository's hooks, fsmonitor and external diff driver off, so
/// that no program the repository names runs as the caller (a `diff` must also pass
/// `--no-textconv`). Agents cannot write the repository's config, but a person's may.
std::vector<std::string> git_argv(const std::filesystem::path& dir,
                                  const std::vector<std::string>& args);

}  // namespace board
