#include "support/files.hpp"
#include "support/unique_fd.hpp"

#include <board/sandbox.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace board {
namespace {

namespace fs = std::filesystem;
using Access = std::uint64_t;

// Rights newer than the kernel headers Debian 12 ships (linux/landlock.h of 6.1).
constexpr Access access_truncate = 1ULL << 14;  // ABI 3

constexpr Access file_rights = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE;
constexpr Access tree_write = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
                              LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
                              LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
                              LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
                              LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;

std::string errno_text(std::string_view what) {
    return std::string{what} + ": " + std::strerror(errno);
}

/// What each of the two rulesets handles on this kernel. Reading: reading files (so the hidden
/// ones can be left out). Writing: every write right. Execution and listing folders stay
/// free. Both handle moving a file between folders (refer), which any ruleset denies unless
/// a rule grants it: reading grants it wherever reading is granted, writing where writing is.
Access reading_rights(int abi) {
    return LANDLOCK_ACCESS_FS_READ_FILE | (abi >= 2 ? LANDLOCK_ACCESS_FS_REFER : 0);
}

Access writing_rights(int abi) {
    Access rights = tree_write;
    if (abi >= 2) rights |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3) rights |= access_truncate;
    return rights;
}

class Ruleset {
public:
    /// A new ruleset handling `handled`; check ok() (else `problem` says why).
    Ruleset(Access handled, std::string& problem)
        : handled_(handled) {
        landlock_ruleset_attr attr{};
        attr.handled_access_fs = handled;
        // Close-on-exec by the kernel's own rule: an agent never holds it.
        fd_.reset(static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0)));
        if (!fd_) problem = errno_text("landlock_create_ruleset");
    }

    bool ok() const { return static_cast<bool>(fd_); }

    /// Grants `rights` beneath `path` (a file gets only the rights a file can have). A path
    /// that is missing, a symbolic link or unreachable is skipped: it grants nothing.
    void grant(const fs::path& path, Access rights) {
        const UniqueFd target{::open(path.c_str(), O_PATH | O_CLOEXEC | O_NOFOLLOW)};
        if (target.get() < 0) return;

        struct stat st {};

        if (::fstat(target.get(), &st) != 0 || S_ISLNK(st.st_mode)) return;
        if (!S_ISDIR(st.st_mode)) {
            rights &= file_rights | access_truncate;
        }
        landlock_path_beneath_attr rule{};
        rule.allowed_access = rights & handled_;
        rule.parent_fd = target.get();
        if (rule.allowed_access == 0) return;
        // A rule the kernel refuses (an odd file system) only leaves that path closed.
        ::syscall(SYS_landlock_add_rule, fd_.get(), LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
    }

    /// The ruleset's descriptor, now the caller's to close.
    int release() { return fd_.release(); }

private:
    UniqueFd fd_;
    Access handled_;
};

std::int64_t ns_of(const timespec& t) {
    return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

ListedFolder listed_folder(const fs::path& path, const struct stat& st) {
    return ListedFolder{path,
                        static_cast<std::uint64_t>(st.st_dev),
                        static_cast<std::uint64_t>(st.st_ino),
                        ns_of(st.st_mtim),
                        ns_of(st.st_ctim)};
}

/// Reading: everything beneath `dir` except the hidden files, granted as few rules as it
/// takes: a folder with nothing hidden beneath it is one rule; one that holds a hidden file
/// is opened up into its entries (and noted in `listed`).
void grant_reading(Ruleset& rules,
                   const fs::path& dir,
                   const std::vector<fs::path>& hidden,
                   Access rights,
                   std::vector<ListedFolder>* listed) {
    const bool holds_hidden = std::any_of(hidden.begin(), hidden.end(), [&](const fs::path& h) {
        return h != dir && path_is_within(h, dir);
    });
    if (!holds_hidden) {
        rules.grant(dir, rights);
        return;
    }
    // A folder that could not be listed whole grants what was listed of it, and is noted as
    // no folder can be (inode 0), so that kept rules made from it are made again next time.
    const auto unlisted = [&] {
        if (listed) listed->push_back(ListedFolder{dir, 0, 0, 0, 0});
    };
    DIR* listing = ::opendir(dir.c_str());
    if (!listing) return unlisted();
    if (struct stat st{}; ::fstat(::dirfd(listing), &st) == 0) {
        if (listed) listed->push_back(listed_folder(dir, st));
    } else {
        unlisted();
    }
    errno = 0;
    while (const dirent* entry = ::readdir(listing)) {
        const std::string_view name{entry->d_name};
        if (name == "." || name == "..") continue;
        const fs::path child = dir / name;
        if (std::find(hidden.begin(), hidden.end(), child) != hidden.end()) continue;
        grant_reading(rules, child, hidden, rights, listed);
        errno = 0;
    }
    if (errno != 0) unlisted();
    ::closedir(listing);
}

int landlock_abi_or(std::string& problem) {
    const int abi = landlock_abi();
    if (abi <= 0) problem = "this kernel offers no Landlock (it is not built in or not enabled)";
    return abi;
}

}  // namespace

bool path_is_within(const fs::path& inner, const fs::path& outer) {
    auto i = inner.begin();
    for (auto o = outer.begin(); o != outer.end() && !o->empty(); ++o, ++i) {
        if (i == inner.end() || *i != *o) return false;
    }
    return true;
}

int landlock_abi() {
    const long abi =
        ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return abi < 0 ? 0 : static_cast<int>(abi);
}

int prepare_reading(const std::vector<fs::path>& hidden,
                    std::string& problem,
                    std::vector<ListedFolder>* listed) {
    const int abi = landlock_abi_or(problem);
    if (abi <= 0) return -1;
    Ruleset rules{reading_rights(abi), problem};
    if (!rules.ok()) return -1;
    grant_reading(rules, "/", hidden, reading_rights(abi), listed);
    return rules.release();
}

int prepare_writing(const Confinement& confinement, std::string& problem) {
    const int abi = landlock_abi_or(problem);
    if (abi <= 0) return -1;
    Ruleset rules{writing_rights(abi), problem};
    if (!rules.ok()) return -1;
    const std::vector<fs::path>& hidden = confinement.hidden;
    for (const fs::path& path : confinement.writable) {
        // Writing a folder that holds a hidden file would open it again: only its entries.
        const bool holds_hidden = std::any_of(
            hidden.begin(), hidden.end(), [&](auto& h) { return path_is_within(h, path); });
        if (holds_hidden) continue;
        rules.grant(path, writing_rights(abi));
    }
    return rules.release();
}

// Raw system calls and no instrumentation: this runs in a child that shares the launcher's
// memory until it execs (see agent_process.cpp).
__attribute__((no_sanitize("address", "undefined"))) int enforce_confinement(
    int reading_fd, int writing_fd) noexcept {
    if (reading_fd < 0 && writing_fd < 0) return 0;
    if (::syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
    for (const int ruleset_fd : {reading_fd, writing_fd}) {
        if (ruleset_fd >= 0 && ::syscall(SYS_landlock_restrict_self, ruleset_fd, 0) != 0)
            return errno;
    }
    return 0;
}

std::string confine_self(const Confinement& confinement) {
    std::string problem;
    const UniqueFd reading{prepare_reading(confinement.hidden, problem)};
    if (!reading) return problem;
    const UniqueFd writing{prepare_writing(confinement, problem)};
    if (!writing) return problem;
    if (const int error = enforce_confinement(reading.get(), writing.get()); error != 0) {
        return std::string{"cannot enforce the Landlock rules: "} + std::strerror(error);
    }
    return {};
}

KeptReadingRules::KeptReadingRules(std::vector<fs::path> hidden)
    : hidden_(std::move(hidden)) {}

bool KeptReadingRules::still_holds() const {
    if (!ruleset_) return false;
    for (const ListedFolder& folder : listed_) {
        struct stat st {};

        if (::stat(folder.path.c_str(), &st) != 0) return false;
        const ListedFolder now = listed_folder(folder.path, st);
        // Changed at the very time of the listing: its times cannot tell whether the listing
        // saw the change.
        if (now != folder || now.mtime_ns >= listed_at_ns_ || now.ctime_ns >= listed_at_ns_)
            return false;
    }
    return true;
}

std::shared_ptr<const UniqueFd> KeptReadingRules::current(std::string& problem) {
    const std::lock_guard lock(mutex_);
    if (still_holds()) return ruleset_;
    std::vector<ListedFolder> listed;
    const std::int64_t listed_at = file_times_from_now_ns();
    auto made = std::make_shared<const UniqueFd>(prepare_reading(hidden_, problem, &listed));
    if (!*made) return nullptr;
    ruleset_ = std::move(made);
    listed_ = std::move(listed);
    listed_at_ns_ = listed_at;
    return ruleset_;
}

}  // namespace board
