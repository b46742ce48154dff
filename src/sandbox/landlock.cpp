#include "support/files.hpp"
#include "support/unique_fd.hpp"

#include <board/sandbox.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace board {
namespace {

namespace fs = std::filesystem;
using Access = std::uint64_t;

// Rights newer than the kernel headers Debian 12 ships (linux/landlock.h of 6.1).
constexpr Access access_truncate = 1ULL << 14;  // ABI 3
// ABI 6: a domain's processes may signal, and connect to abstract Unix sockets of, only
// processes of their own domain (landlock_ruleset_attr.scoped, after handled_access_net).
constexpr Access scope_abstract_unix_socket = 1ULL << 0;
constexpr Access scope_signal = 1ULL << 1;

struct RulesetAttrWithScope {
    std::uint64_t handled_access_fs;
    std::uint64_t handled_access_net;
    std::uint64_t scoped;
};

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
    /// A new ruleset handling `handled` (and, with `scoped`, the ABI-6 scopes); check ok()
    /// (else `problem` says why).
    Ruleset(Access handled, std::string& problem, Access scoped = 0)
        : handled_(handled) {
        RulesetAttrWithScope attr{handled, 0, scoped};
        // The short form for a kernel that knows no scopes: it refuses a longer struct.
        const std::size_t size = scoped != 0 ? sizeof attr : sizeof(landlock_ruleset_attr);
        // Close-on-exec by the kernel's own rule: an agent never holds it.
        fd_.reset(static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, size, 0)));
        if (!fd_) problem = errno_text("landlock_create_ruleset");
    }

    bool ok() const { return static_cast<bool>(fd_); }

    /// Grants `rights` beneath `path` (a file gets only the rights a file can have). A path
    /// that is missing, a symbolic link or unreachable is skipped: it grants nothing.
    void grant(const fs::path& path, Access rights) {
        const UniqueFd target{::open(path.c_str(), O_PATH | O_CLOEXEC | O_NOFOLLOW)};
        if (target.get() < 0) return;

        struct stat st {};

        if (::fstat(target.get(), &st) != 0) return;
        grant_opened(target.get(), st.st_mode, rights);
    }

    /// As grant(), for a place already opened (`O_PATH`, not followed) whose type is `mode`.
    void grant_opened(int target, mode_t mode, Access rights) {
        if (S_ISLNK(mode)) return;
        if (!S_ISDIR(mode)) {
            rights &= file_rights | access_truncate;
        }
        landlock_path_beneath_attr rule{};
        rule.allowed_access = rights & handled_;
        rule.parent_fd = target;
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

namespace {

/// Writing a folder that holds a hidden file would open it again: such a place is left out
/// (its entries are not granted one by one).
bool holds_hidden(const fs::path& place, const std::vector<fs::path>& hidden) {
    return std::any_of(
        hidden.begin(), hidden.end(), [&](auto& h) { return path_is_within(h, place); });
}

/// A writing ruleset with no rule yet. Each run's writing domain is its own: its agent cannot
/// signal, or reach by an abstract socket, the daemon, a person's programs or another run's
/// agent.
Ruleset writing_ruleset(int abi, std::string& problem) {
    return Ruleset{
        writing_rights(abi), problem, abi >= 6 ? scope_abstract_unix_socket | scope_signal : 0};
}

/// Grants each of `places` that holds no hidden file.
void grant_writing(Ruleset& rules, int abi, const Confinement& places) {
    for (const fs::path& path : places.writable)
        if (!holds_hidden(path, places.hidden)) rules.grant(path, writing_rights(abi));
}

}  // namespace

int prepare_writing(const Confinement& confinement, std::string& problem) {
    const int abi = landlock_abi_or(problem);
    if (abi <= 0) return -1;
    Ruleset rules = writing_ruleset(abi, problem);
    if (!rules.ok()) return -1;
    grant_writing(rules, abi, confinement);
    return rules.release();
}

struct KeptWritingPlaces::Place {
    fs::path path;
    UniqueFd held;  ///< `O_PATH`, not followed; none while the path names nothing
    std::uint64_t device = 0;
    std::uint64_t inode = 0;
    mode_t mode = 0;
};

KeptWritingPlaces::KeptWritingPlaces(const std::vector<fs::path>& places) {
    for (const fs::path& path : places) places_.emplace_back().path = path;
}

KeptWritingPlaces::~KeptWritingPlaces() = default;

int KeptWritingPlaces::prepare(const Confinement& own, std::string& problem) {
    const int abi = landlock_abi_or(problem);
    if (abi <= 0) return -1;
    Ruleset rules = writing_ruleset(abi, problem);
    if (!rules.ok()) return -1;
    {
        const std::lock_guard lock(mutex_);
        for (Place& place : places_) {
            if (holds_hidden(place.path, own.hidden)) continue;

            struct stat st {};

            if (::lstat(place.path.c_str(), &st) != 0) {
                place.held.reset();  // gone: nothing to grant until it is back
                continue;
            }
            const bool same = place.held && place.device == st.st_dev && place.inode == st.st_ino &&
                              place.mode == st.st_mode;
            if (!same) {
                // Made, replaced or changed in type since: the file the path names now.
                place.held.reset(::open(place.path.c_str(), O_PATH | O_CLOEXEC | O_NOFOLLOW));
                if (!place.held || ::fstat(place.held.get(), &st) != 0) {
                    place.held.reset();
                    continue;
                }
                place.device = st.st_dev;
                place.inode = st.st_ino;
                place.mode = st.st_mode;
            }
            rules.grant_opened(place.held.get(), place.mode, writing_rights(abi));
        }
    }
    grant_writing(rules, abi, own);
    return rules.release();
}

namespace {

#if defined(__x86_64__)
constexpr std::uint32_t native_arch = AUDIT_ARCH_X86_64;
// A 32-bit x86 program reaches socket() directly or through socketcall().
constexpr std::uint32_t compat_socket = 359;
constexpr std::uint32_t compat_socketcall = 102;
#elif defined(__aarch64__)
constexpr std::uint32_t native_arch = AUDIT_ARCH_AARCH64;
constexpr std::uint32_t compat_socket = 281;  // 32-bit ARM has no socketcall
constexpr std::uint32_t compat_socketcall = 281;
#else
#error "the Unix socket filter knows x86_64 and aarch64"
#endif

// The x32 calls of an x86_64 kernel carry a bit of their own: refused whole.
constexpr std::uint32_t x32_syscall_bit = 0x40000000;

constexpr sock_filter load(std::uint32_t offset) {
    return sock_filter{BPF_LD | BPF_W | BPF_ABS, 0, 0, offset};
}

constexpr sock_filter jump(std::uint16_t test, std::uint32_t k, std::uint8_t yes, std::uint8_t no) {
    return sock_filter{static_cast<std::uint16_t>(BPF_JMP | test | BPF_K), yes, no, k};
}

constexpr sock_filter give(std::uint32_t verdict) {
    return sock_filter{BPF_RET | BPF_K, 0, 0, verdict};
}

constexpr std::uint32_t refuse = SECCOMP_RET_ERRNO | EACCES;

// io_uring's calls have one number on every architecture Linux has.
constexpr std::uint32_t io_uring_first = 425;  // io_uring_setup
constexpr std::uint32_t io_uring_last = 427;   // io_uring_register
constexpr std::uint32_t no_such_call = SECCOMP_RET_ERRNO | ENOSYS;

// socket(AF_UNIX, ...) fails with EACCES; everything else goes on. Landlock does not guard
// connect(): through a Unix socket (a session bus's `systemd-run --user`, tmux, an ssh or
// gpg agent, docker) a confined agent would have a program run for it outside its sandbox,
// one that can read the HTTP token. socketpair() stays: runtimes make their pipes with it.
// io_uring is refused as absent (ENOSYS: runtimes fall back to threads): its socket
// operation makes a socket without the socket() call.
// Jumps count the instructions skipped; the index of each is in its comment.
constexpr sock_filter no_unix_sockets[] = {
    load(offsetof(seccomp_data, arch)),      // 0
    jump(BPF_JEQ, native_arch, 0, 10),       // 1: another arch: to 12
    load(offsetof(seccomp_data, nr)),        // 2
    jump(BPF_JGE, x32_syscall_bit, 6, 0),    // 3: x32: to 10
    jump(BPF_JGE, io_uring_first, 0, 1),     // 4: below io_uring: to 6
    jump(BPF_JGT, io_uring_last, 0, 5),      // 5: io_uring: to 11
    jump(BPF_JEQ, SYS_socket, 0, 2),         // 6: not socket(): to 9
    load(offsetof(seccomp_data, args[0])),   // 7: the domain (low word)
    jump(BPF_JEQ, AF_UNIX, 1, 0),            // 8: AF_UNIX: to 10
    give(SECCOMP_RET_ALLOW),                 // 9
    give(refuse),                            // 10
    give(no_such_call),                      // 11
    load(offsetof(seccomp_data, nr)),        // 12
    jump(BPF_JEQ, compat_socket, 3, 0),      // 13: to 17
    jump(BPF_JEQ, compat_socketcall, 2, 0),  // 14: to 17
    jump(BPF_JGE, io_uring_first, 0, 2),     // 15: below io_uring: to 18
    jump(BPF_JGT, io_uring_last, 1, 2),      // 16: above: to 18, io_uring: to 19
    give(refuse),                            // 17
    give(SECCOMP_RET_ALLOW),                 // 18
    give(no_such_call),                      // 19
};

}  // namespace

// Raw system calls and no instrumentation: these run in a child that shares the launcher's
// memory until it execs (see agent_process.cpp). Without SECCOMP_FILTER_FLAG_TSYNC the filter
// is the calling thread's alone, as no_new_privs is.
__attribute__((no_sanitize("address", "undefined"))) int filter_this_thread() noexcept {
    if (::syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
    const sock_fprog filter{static_cast<unsigned short>(std::size(no_unix_sockets)),
                            const_cast<sock_filter*>(no_unix_sockets)};
    if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &filter) != 0) return errno;
    return 0;
}

__attribute__((no_sanitize("address", "undefined"))) int enforce_confinement(
    int reading_fd, int writing_fd, bool filter_inherited) noexcept {
    if (reading_fd < 0 && writing_fd < 0) return 0;
    // Inherited is checked, not believed: without no_new_privs or in no filter mode it is
    // not ours, and the filter is installed here.
    const bool inherited = filter_inherited &&
                           ::syscall(SYS_prctl, PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1 &&
                           ::syscall(SYS_prctl, PR_GET_SECCOMP, 0, 0, 0, 0) == SECCOMP_MODE_FILTER;
    if (!inherited) {
        if (const int error = filter_this_thread(); error != 0) return error;
    }
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
