#pragma once
// Confining an agent with Landlock (spec/agents.md, "Dialects and confinement"): after
// confine_self() the process and everything it starts can write only the listed paths and
// cannot read the hidden files; it reads and runs everything else. Landlock is unprivileged
// and stacks, so an agent cannot undo it, and a verdict therefore needs a human: an agent
// can neither append to a log nor read the HTTP token.
//
// The daemon launches an agent through its own binary in confine mode (run_confined): the
// rules are applied between fork and exec of the real program, which posix_spawn cannot do.

#include <filesystem>
#include <string>
#include <vector>

namespace board {

/// The highest Landlock ABI this kernel offers; 0 when it has none (or it is disabled).
int landlock_abi();

struct Confinement {
    /// Writable, and readable: folders (everything beneath) or single files. Paths that do
    /// not exist are skipped.
    std::vector<std::filesystem::path> writable;
    /// Files that can be neither read nor written (the HTTP token). Their folders stay
    /// listable; every other file beside them stays readable.
    std::vector<std::filesystem::path> hidden;
    friend bool operator==(const Confinement&, const Confinement&) = default;
};

/// Whether `inner` is `outer` or beneath it, component by component (no file system access:
/// give canonical paths).
bool path_is_within(const std::filesystem::path& inner, const std::filesystem::path& outer);

/// Confines the calling process (and its future children) for good. Returns an empty string
/// on success, else why not (no Landlock, a syscall refused): one sentence.
std::string confine_self(const Confinement& rules);

/// The argv that runs `program_argv` confined by `rules`: `launcher --confine --write P ...
/// --hide P ... -- program args...`. `launcher` is a binary whose main() hands `--confine` to
/// run_confined (board-daemon); `program_argv[0]` must be an absolute path.
std::vector<std::string> confined_argv(const std::filesystem::path& launcher,
                                       const Confinement& rules,
                                       const std::vector<std::string>& program_argv);

/// The confine mode of a launcher: `argv` as confined_argv() made it (argv[1] == "--confine").
/// Confines, then execs the program; returns only on failure, with the exit status to use
/// (126, and one line on stderr).
int run_confined(int argc, char** argv);

}  // namespace board
