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

    int fd() const { return fd_.get(); }

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

fs::path real_or_as_is(const fs::path& p) {
    std::error_code ec;
    auto real = fs::weakly_canonical(p, ec);
    return ec ? p.lexically_normal() : real;
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

std::string confine_self(const Confinement& confinement) {
    const int abi = landlock_abi();
    if (abi <= 0) return "this kernel offers no Landlock (it is not built in or not enabled)";
    const Access handled = handled_rights(abi);
    landlock_ruleset_attr attr{};
    attr.handled_access_fs = handled;
    const int ruleset_fd =
        static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0));
    if (ruleset_fd < 0) return errno_text("landlock_create_ruleset");
    Ruleset rules{ruleset_fd, handled};

    std::vector<fs::path> hidden;
    for (const auto& h : confinement.hidden) hidden.push_back(real_or_as_is(h));
    grant_reading(rules, "/", hidden);
    const Access write_rights = handled & ~LANDLOCK_ACCESS_FS_READ_FILE;
    for (const auto& w : confinement.writable) {
        const fs::path path = real_or_as_is(w);
        // Writing a folder that holds a hidden file would open it again: only its entries.
        const bool holds_hidden = std::any_of(
            hidden.begin(), hidden.end(), [&](auto& h) { return path_is_within(h, path); });
        if (holds_hidden) continue;
        rules.grant(path, write_rights | LANDLOCK_ACCESS_FS_READ_FILE);
    }
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno_text("prctl(NO_NEW_PRIVS)");
    if (::syscall(SYS_landlock_restrict_self, rules.fd(), 0) != 0)
        return errno_text("landlock_restrict_self");
    return {};
}

std::vector<std::string> confined_argv(const fs::path& launcher,
                                       const Confinement& rules,
                                       const std::vector<std::string>& program_argv) {
    std::vector<std::string> argv{launcher.string(), "--confine"};
    for (const auto& w : rules.writable) argv.insert(argv.end(), {"--write", w.string()});
    for (const auto& h : rules.hidden) argv.insert(argv.end(), {"--hide", h.string()});
    argv.emplace_back("--");
    argv.insert(argv.end(), program_argv.begin(), program_argv.end());
    return argv;
}

int run_confined(int argc, char** argv) {
    Confinement rules;
    int i = 2;  // argv[1] is --confine
    for (; i < argc; ++i) {
        const std::string_view arg{argv[i]};
        if (arg == "--") break;
        if ((arg == "--write" || arg == "--hide") && i + 1 < argc) {
            (arg == "--write" ? rules.writable : rules.hidden).emplace_back(argv[++i]);
            continue;
        }
        ::dprintf(STDERR_FILENO, "board: --confine: unexpected argument \"%s\"\n", argv[i]);
        return 126;
    }
    if (i + 1 >= argc) {
        ::dprintf(STDERR_FILENO, "board: --confine: no program after --\n");
        return 126;
    }
    if (const std::string problem = confine_self(rules); !problem.empty()) {
        ::dprintf(STDERR_FILENO, "board: cannot confine the agent: %s\n", problem.c_str());
        return 126;
    }
    ::execv(argv[i + 1], argv + i + 1);
    ::dprintf(STDERR_FILENO, "board: %s: %s\n", argv[i + 1], std::strerror(errno));
    return 126;
}

}  // namespace board
