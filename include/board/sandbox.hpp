#pragma once
// Confining an agent with Landlock (spec/agents.md, "Dialects and confinement"): after
// confine_self() the process and everything it starts can write only the listed paths and
// cannot read the hidden files; it reads and runs everything else. Landlock is unprivileged
// and stacks, so an agent cannot undo it, and a verdict therefore needs a human: an agent
// can neither append to a log nor read the HTTP token.
//
// The daemon prepares the ruleset itself (paths resolved, folders listed, rules added) and
// its launcher enforces it in the child between fork and exec: two system calls there, no
// second program, nothing allocated.

#include <filesystem>
#include <string>
#include <vector>

namespace board {

/// The highest Landlock ABI this kernel offers; 0 when it has none (or it is disabled).
int landlock_abi();

/// Paths are canonical (absolute, links resolved, as fs::weakly_canonical gives them): the
/// hidden files are found by listing folders down from `/`, and a writable folder that holds
/// a hidden file is refused by comparing paths.
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

/// Makes the Landlock ruleset for `rules`: returns its descriptor (close-on-exec; the caller
/// owns it and closes it once the child runs), or -1 and why not in `problem`, one sentence
/// (no Landlock on this kernel, a system call refused).
int prepare_confinement(const Confinement& rules, std::string& problem);

/// Confines the calling process for good with a prepared ruleset. For the child between fork
/// and exec: async-signal-safe, allocates nothing. Returns 0, or the errno of the call that
/// failed.
int enforce_confinement(int ruleset_fd) noexcept;

/// prepare_confinement, then enforce_confinement on the calling process. Returns an empty
/// string on success, else why not, one sentence.
std::string confine_self(const Confinement& rules);

}  // namespace board
