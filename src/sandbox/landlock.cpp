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

/// What a ruleset handles on this kernel: every write right, and reading files (so the hidden
/// ones can be left out). Execution and listing folders stay free.
Access handled_rights(int abi) {
    Access rights = tree_write | LANDLOCK_ACCESS_FS_READ_FILE;
    if (abi >= 2) rights |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3) rights |= access_truncate;
    return rights;
}

class Ruleset {
public:
    Ruleset(int ruleset_fd, Access handled)
        : fd_(ruleset_fd)
        , handled_(handled) {}

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

/// Reading: everything beneath `dir` except the hidden files, granted as few rules as it
/// takes: a folder with nothing hidden beneath it is one rule; one that holds a hidden file
/// is opened up into its entries.
void grant_reading(Ruleset& rules, const fs::path& dir, const std::vector<fs::path>& hidden) {
    const bool holds_hidden = std::any_of(hidden.begin(), hidden.end(), [&](const fs::path& h) {
        return h != dir && path_is_within(h, dir);
    });
    if (!holds_hidden) {
        rules.grant(dir, LANDLOCK_ACCESS_FS_READ_FILE);
        return;
    }
    DIR* listing = ::opendir(dir.c_str());
    if (!listing) return;
    while (const dirent* entry = ::readdir(listing)) {
        const std::string_view name{entry->d_name};
        if (name == "." || name == "..") continue;
        const fs::path child = dir / name;
        if (std::find(hidden.begin(), hidden.end(), child) != hidden.end()) continue;
        grant_reading(rules, child, hidden);
    }
    ::closedir(listing);
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

int prepare_confinement(const Confinement& confinement, std::string& problem) {
    const int abi = landlock_abi();
    if (abi <= 0) {
        problem = "this kernel offers no Landlock (it is not built in or not enabled)";
        return -1;
    }
    const Access handled = handled_rights(abi);
    landlock_ruleset_attr attr{};
    attr.handled_access_fs = handled;
    // Close-on-exec by the kernel's own rule: an agent never holds it.
    const int ruleset_fd =
        static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0));
    if (ruleset_fd < 0) {
        problem = errno_text("landlock_create_ruleset");
        return -1;
    }
    Ruleset rules{ruleset_fd, handled};

    const std::vector<fs::path>& hidden = confinement.hidden;
    grant_reading(rules, "/", hidden);
    const Access write_rights = handled & ~LANDLOCK_ACCESS_FS_READ_FILE;
    for (const fs::path& path : confinement.writable) {
        // Writing a folder that holds a hidden file would open it again: only its entries.
        const bool holds_hidden = std::any_of(
            hidden.begin(), hidden.end(), [&](auto& h) { return path_is_within(h, path); });
        if (holds_hidden) continue;
        rules.grant(path, write_rights | LANDLOCK_ACCESS_FS_READ_FILE);
    }
    return rules.release();
}

// Raw system calls and no instrumentation: this runs in a child that shares the launcher's
// memory until it execs (see agent_process.cpp).
__attribute__((no_sanitize("address", "undefined"))) int enforce_confinement(
    int ruleset_fd) noexcept {
    if (::syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
    if (::syscall(SYS_landlock_restrict_self, ruleset_fd, 0) != 0) return errno;
    return 0;
}

std::string confine_self(const Confinement& confinement) {
    std::string problem;
    const UniqueFd ruleset{prepare_confinement(confinement, problem)};
    if (!ruleset) return problem;
    if (const int error = enforce_confinement(ruleset.get()); error != 0) {
        return std::string{"cannot enforce the Landlock rules: "} + std::strerror(error);
    }
    return {};
}

}  // namespace board
