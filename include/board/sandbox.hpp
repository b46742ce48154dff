#pragma once
// Confining an agent with Landlock (spec/agents.md, "Dialects and confinement"): after
// confine_self() the process and everything it starts can write only the listed paths and
// cannot read the hidden files; it reads and runs everything else. Landlock is unprivileged
// and stacks, so an agent cannot undo it, and a verdict therefore needs a human: an agent
// can neither append to a log nor read the HTTP token.
//
// A confinement is two stacked Landlock rulesets, each handling its own rights: the reading
// one (everything but the hidden files) and the writing one (only the writable paths).
// Reading is the costly one to make (the folders on the way to each hidden file are listed
// entry by entry) and the same for every run, so the daemon keeps it (KeptReadingRules);
// the writing one is made per run. Its launcher enforces both in the child between fork
// and exec: three system calls there, no second program, nothing allocated.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
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

class UniqueFd;

/// A folder listed to make a reading ruleset, as it was then.
struct ListedFolder {
    std::filesystem::path path;
    std::uint64_t device = 0;
    std::uint64_t inode = 0;
    std::int64_t mtime_ns = 0;
    std::int64_t ctime_ns = 0;
    friend bool operator==(const ListedFolder&, const ListedFolder&) = default;
};

/// Makes the reading ruleset: every file can be read but the `hidden` ones (canonical
/// paths). Returns its descriptor (close-on-exec; the caller owns it), or -1 and why not in
/// `problem`, one sentence (no Landlock on this kernel, a system call refused). `listed`, when
/// given, receives the folders listed to make it: a change to one of them (an entry added,
/// removed or replaced) makes the ruleset out of date.
int prepare_reading(const std::vector<std::filesystem::path>& hidden,
                    std::string& problem,
                    std::vector<ListedFolder>* listed = nullptr);

/// Makes the writing ruleset: only `rules.writable` can be written (a writable folder that
/// holds a hidden file is left out). Returns its descriptor or -1, as prepare_reading.
int prepare_writing(const Confinement& rules, std::string& problem);

/// The writable places every run shares (the shared rules' `writable`), each held open so that
/// a run's writing ruleset takes one stat per place, not an open, a stat and a close: a place
/// is opened again only when its path names another file than the one held (made, removed or
/// replaced since). Safe to share between threads.
class KeptWritingPlaces {
public:
    explicit KeptWritingPlaces(const std::vector<std::filesystem::path>& places);
    ~KeptWritingPlaces();
    KeptWritingPlaces(const KeptWritingPlaces&) = delete;
    KeptWritingPlaces& operator=(const KeptWritingPlaces&) = delete;

    /// The writing ruleset of one run: these places and `own.writable` (a run's own places),
    /// each left out when it holds one of `own.hidden`, as prepare_writing gives it.
    int prepare(const Confinement& own, std::string& problem);

private:
    struct Place;
    std::mutex mutex_;
    std::vector<Place> places_;
};

/// Confines the calling process for good with prepared rulesets (either may be -1: that half
/// is not confined), under the filter that refuses Unix sockets and io_uring (installed here,
/// or already `filter_inherited` from a thread that ran filter_this_thread). For the child
/// between fork and exec: async-signal-safe, allocates nothing. Returns 0, or the errno of
/// the call that failed.
int enforce_confinement(int reading_fd, int writing_fd, bool filter_inherited = false) noexcept;

/// Sets no_new_privs and installs the filter enforce_confinement uses on the calling thread
/// alone (the process's other threads stay as they were). Every process the thread starts
/// from then on has both: a thread that launches only confined agents filters itself once,
/// and the kernel does not build the filter again for each child. Returns 0, or the errno of
/// the call that failed.
int filter_this_thread() noexcept;

/// Both rulesets made, then enforced on the calling process. Returns an empty string on
/// success, else why not, one sentence.
std::string confine_self(const Confinement& rules);

/// The reading ruleset for fixed hidden files, made once and kept while every folder listed
/// to make it is as it was (identity and times; a folder changed within one tick of the
/// clock of file times before the listing is not believed unchanged). Safe to share between
/// threads.
class KeptReadingRules {
public:
    explicit KeptReadingRules(std::vector<std::filesystem::path> hidden);

    /// The ruleset as it holds now (made again if a listed folder changed), or null and why
    /// not in `problem`.
    std::shared_ptr<const UniqueFd> current(std::string& problem);

private:
    bool still_holds() const;

    std::vector<std::filesystem::path> hidden_;
    std::mutex mutex_;
    std::shared_ptr<const UniqueFd> ruleset_;
    std::vector<ListedFolder> listed_;
    std::int64_t listed_at_ns_ = 0;
};

}  // namespace board
