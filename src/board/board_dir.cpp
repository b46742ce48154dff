// The board folder: locating it, ticket paths, and allocating ids under the board lock.

#include <board/board_config.hpp>
#include <board/board_dir.hpp>
#include <board/ticket.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <system_error>
#include <thread>
#include <unistd.h>

namespace board {

namespace fs = std::filesystem;

namespace {

using Kind = BoardDirError::Kind;

constexpr std::int64_t max_ticket_number = 999'999'999;  // {1,9} digits in the id pattern

BoardDirError io_error(std::string_view what, const fs::path& path, int err) {
    return BoardDirError{Kind::io,
                         fmt::format("{} {}: {}", what, path.string(), std::strerror(err))};
}

/// An fd closed on every path out, so an early error return cannot leak the lock.
class Fd {
public:
    explicit Fd(int fd)
        : fd_(fd) {}

    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;

    ~Fd() {
        if (fd_ >= 0) ::close(fd_);  // closing releases the flock
    }

    int get() const { return fd_; }

private:
    int fd_;
};

/// flock has no timeout of its own and alarm() is process-wide, so poll with LOCK_NB and a
/// short growing sleep; a create holds the lock for a directory scan and one mkdir.
bool lock_with_timeout(int fd, std::chrono::milliseconds timeout, int& err) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    auto pause = std::chrono::microseconds{100};
    for (;;) {
        if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return true;
        if (errno == EINTR) continue;
        if (errno != EWOULDBLOCK) {
            err = errno;
            return false;
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            err = 0;
            return false;
        }
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::microseconds{5'000});
    }
}

/// N of `PREFIX-N`, if `name` is a valid id with exactly this prefix.
std::optional<std::int64_t> number_of(std::string_view name, std::string_view prefix) {
    if (!is_valid_ticket_id(name) || name.size() <= prefix.size() + 1) return std::nullopt;
    if (name.substr(0, prefix.size()) != prefix || name[prefix.size()] != '-') return std::nullopt;
    const std::string_view digits = name.substr(prefix.size() + 1);
    std::int64_t n = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (ec != std::errc{} || ptr != digits.data() + digits.size()) return std::nullopt;
    return n;
}

}  // namespace

std::optional<fs::path> find_board(const fs::path& start_dir) {
    std::error_code ec;
    fs::path dir = fs::absolute(start_dir, ec);
    if (ec) return std::nullopt;
    dir = dir.lexically_normal();
    for (;;) {
        if (fs::is_regular_file(dir / "board.yaml", ec)) return dir;
        if (!dir.has_relative_path()) return std::nullopt;  // the root: nothing above it
        fs::path parent = dir.parent_path();
        if (parent == dir) return std::nullopt;
        dir = std::move(parent);
    }
}

fs::path tickets_dir(const fs::path& board_root) {
    return board_root / "tickets";
}

std::optional<fs::path> ticket_dir(const fs::path& board_root, std::string_view id) {
    if (!is_valid_ticket_id(id)) return std::nullopt;
    return tickets_dir(board_root) / fs::path{std::string{id}};
}

BoardDirResult<std::string> allocate_ticket_id(const fs::path& board_root,
                                               std::string_view prefix,
                                               std::chrono::milliseconds lock_timeout) {
    if (!is_valid_prefix(prefix)) {
        return BoardDirError{Kind::invalid_id,
                             fmt::format("invalid ticket prefix \"{}\": expected an uppercase "
                                         "letter then up to 15 uppercase letters or digits",
                                         prefix)};
    }
    const fs::path tickets = tickets_dir(board_root);
    if (::mkdir(tickets.c_str(), 0777) != 0 && errno != EEXIST) {
        return io_error("cannot create", tickets, errno);
    }

    const fs::path lock_path = tickets / ".lock";
    // O_CLOEXEC: an agent spawned while we hold the lock must not inherit it (and keep it).
    const Fd lock{::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666)};
    if (lock.get() < 0) return io_error("cannot open", lock_path, errno);
    int err = 0;
    if (!lock_with_timeout(lock.get(), lock_timeout, err)) {
        if (err != 0) return io_error("cannot lock", lock_path, err);
        return BoardDirError{Kind::lock_timeout,
                             fmt::format("timed out after {} waiting for the board lock {}",
                                         format_duration(lock_timeout),
                                         lock_path.string())};
    }

    std::int64_t highest = 0;
    std::error_code ec;
    for (fs::directory_iterator it{tickets, ec}, end; !ec && it != end; it.increment(ec)) {
        if (const auto n = number_of(it->path().filename().string(), prefix)) {
            highest = std::max(highest, *n);
        }
    }
    if (ec) return io_error("cannot list", tickets, ec.value());

    // The lock makes the first mkdir succeed for every cooperating writer; EEXIST can only
    // come from one that bypassed it (e.g. a hand-made folder), and then the next number is
    // as good, so step past it a bounded number of times.
    for (std::int64_t n = highest + 1; n <= std::min(highest + 1000, max_ticket_number); ++n) {
        std::string id = fmt::format("{}-{}", prefix, n);
        const fs::path dir = tickets / id;
        if (::mkdir(dir.c_str(), 0777) == 0) {
            // Make the claim durable before the id is handed out: a crash after a create was
            // acknowledged must not hand the same number out again.
            const Fd parent{::open(tickets.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
            if (parent.get() < 0) return io_error("cannot open", tickets, errno);
            if (::fsync(parent.get()) != 0) return io_error("cannot sync", tickets, errno);
            return id;
        }
        if (errno != EEXIST) return io_error("cannot create", dir, errno);
    }
    return BoardDirError{
        Kind::exhausted,
        fmt::format("no free ticket number for prefix {} in {}", prefix, tickets.string())};
}

}  // namespace board
