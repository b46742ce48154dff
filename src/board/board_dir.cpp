// The board folder: locating it, ticket paths, and creating tickets whole under the board lock.

#include "support/unique_fd.hpp"

#include <board/board_config.hpp>
#include <board/board_dir.hpp>
#include <board/ticket.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <optional>
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

/// Where a new ticket is built before it gets its name (a dot name: no reader lists it).
constexpr const char* staging_folder = ".creating";

BoardDirError io_error(std::string_view what, const fs::path& path, int err) {
    return BoardDirError{Kind::io,
                         fmt::format("{} {}: {}", what, path.string(), std::strerror(err))};
}

/// flock has no timeout of its own and alarm() is process-wide, so poll with LOCK_NB and a
/// short growing sleep; a create holds the lock while it writes one small ticket.
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

/// `tickets/.last-id`: `PREFIX N LINKS`, the number the last create took and the link count
/// of `tickets/` right after it. A folder's link count is 2 + its subfolders on ext4, xfs and
/// tmpfs, so while it is unchanged no ticket folder came or went, and N is still the largest:
/// a create then skips listing the folder (10 getdents calls, 2.5 ms, at 10,000 tickets).
/// Only a hint: anything odd (no file, another prefix, a filesystem that reports 1 link for
/// folders, as btrfs does) means listing, and the rename stays the claim.
constexpr const char* last_id_file = ".last-id";

std::optional<std::int64_t> hinted_highest(int tickets_fd, std::string_view prefix) {
    struct stat st {};

    if (::fstat(tickets_fd, &st) != 0 || st.st_nlink < 2) return std::nullopt;
    const int fd = ::openat(tickets_fd, last_id_file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    char text[64];
    const ssize_t got = ::pread(fd, text, sizeof text, 0);
    ::close(fd);
    if (got <= 0) return std::nullopt;
    const std::string_view line{text, static_cast<std::size_t>(got)};
    const auto first_space = line.find(' ');
    const auto second_space = line.find(' ', first_space + 1);
    const auto end = line.find('\n');
    if (first_space == std::string_view::npos || second_space == std::string_view::npos ||
        end == std::string_view::npos || end < second_space ||
        line.substr(0, first_space) != prefix)
        return std::nullopt;
    const auto whole_number = [](std::string_view digits, auto& value) {
        const auto [at, error] =
            std::from_chars(digits.data(), digits.data() + digits.size(), value);
        return error == std::errc{} && at == digits.data() + digits.size();
    };
    std::int64_t number = 0;
    std::uint64_t links = 0;
    if (!whole_number(line.substr(first_space + 1, second_space - first_space - 1), number) ||
        !whole_number(line.substr(second_space + 1, end - second_space - 1), links) || number < 1 ||
        number > max_ticket_number || links != static_cast<std::uint64_t>(st.st_nlink))
        return std::nullopt;
    return number;
}

/// Best effort, under the board lock: a hint that is not written only costs the next create
/// a listing.
void remember_highest(int tickets_fd, std::string_view prefix, std::int64_t number) {
    struct stat st {};

    if (::fstat(tickets_fd, &st) != 0 || st.st_nlink < 2) return;
    const std::string line = fmt::format("{} {} {}\n", prefix, number, st.st_nlink);
    const int fd =
        ::openat(tickets_fd, last_id_file, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return;
    const bool written =
        ::pwrite(fd, line.data(), line.size(), 0) == static_cast<ssize_t>(line.size()) &&
        ::ftruncate(fd, static_cast<off_t>(line.size())) == 0;
    ::close(fd);
    // A hint half written is no hint: without one, the next create lists the folder.
    if (!written) ::unlinkat(tickets_fd, last_id_file, 0);
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

fs::path worktree_dir(const fs::path& board_root, std::string_view id) {
    return board_root / ".board" / "worktrees" / fs::path{std::string{id}};
}

std::string run_file_stem(std::string_view run, Status phase) {
    return std::string{run} + "-" + std::string{to_string(phase)};
}

std::optional<fs::path> ticket_dir(const fs::path& board_root, std::string_view id) {
    if (!is_valid_ticket_id(id)) return std::nullopt;
    return tickets_dir(board_root) / fs::path{std::string{id}};
}

BoardDirResult<std::string> create_ticket_folder(const fs::path& board_root,
                                                 std::string_view prefix,
                                                 const TicketFiller& fill,
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
    // Closed on every path out (closing releases the flock), so an early return cannot leak it.
    const UniqueFd lock{::open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666)};
    if (lock.get() < 0) return io_error("cannot open", lock_path, errno);
    int err = 0;
    if (!lock_with_timeout(lock.get(), lock_timeout, err)) {
        if (err != 0) return io_error("cannot lock", lock_path, err);
        return BoardDirError{Kind::lock_timeout,
                             fmt::format("timed out after {} waiting for the board lock {}",
                                         format_duration(lock_timeout),
                                         lock_path.string())};
    }

    const UniqueFd tickets_fd{::open(tickets.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
    if (tickets_fd.get() < 0) return io_error("cannot open", tickets, errno);
    // Only the lock holder stages, so one name serves every create; one found now was left by
    // a create that was killed, and was never a ticket.
    const fs::path staging = tickets / staging_folder;
    std::error_code ec;
    fs::remove_all(staging, ec);
    if (ec) return io_error("cannot remove the leftover", staging, ec.value());

    // Builds PREFIX-n in the staging folder and renames it into place: true when that settled
    // it (created, or an error in `failure`), false when the number is taken.
    std::string id;
    std::optional<BoardDirError> failure;
    const auto settle = [&](BoardDirError error) {
        failure = std::move(error);
        fs::remove_all(staging, ec);
        return true;
    };
    const auto claim = [&](std::int64_t n) {
        id = fmt::format("{}-{}", prefix, n);
        // A number taken by a writer that bypassed the lock (a folder made by hand): skipped
        // before anything is built for it.
        if (::faccessat(tickets_fd.get(), id.c_str(), F_OK, AT_SYMLINK_NOFOLLOW) == 0) return false;
        if (::mkdirat(tickets_fd.get(), staging_folder, 0777) != 0)
            return settle(io_error("cannot create", staging, errno));
        if (!fill(id, staging))
            return settle(
                BoardDirError{Kind::declined, fmt::format("the create of {} was given up", id)});
        // The staged files' names must be durable before the folder's new name is.
        if (const UniqueFd staged{
                ::openat(tickets_fd.get(), staging_folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
            staged.get() < 0 || ::fsync(staged.get()) != 0)
            return settle(io_error("cannot sync", staging, errno));
        int renamed = ::renameat2(
            tickets_fd.get(), staging_folder, tickets_fd.get(), id.c_str(), RENAME_NOREPLACE);
        // A file system without RENAME_NOREPLACE: the name was free a moment ago under the lock.
        if (renamed != 0 && errno == EINVAL)
            renamed = ::renameat(tickets_fd.get(), staging_folder, tickets_fd.get(), id.c_str());
        if (renamed != 0) {
            if (errno == EEXIST || errno == ENOTEMPTY) {
                fs::remove_all(staging, ec);
                return false;
            }
            return settle(io_error("cannot rename the new ticket into", tickets / id, errno));
        }
        // Durable before the id is handed out: a crash after a create was acknowledged must
        // neither lose the ticket nor hand its number out again.
        if (::fsync(tickets_fd.get()) != 0) {
            failure = io_error("cannot sync", tickets, errno);
            return true;
        }
        remember_highest(tickets_fd.get(), prefix, n);
        return true;
    };
    const auto created = [&]() -> BoardDirResult<std::string> {
        if (failure) return *failure;
        return id;
    };

    // The hint's next number, if it is still free; otherwise the folder is listed.
    const auto hinted = hinted_highest(tickets_fd.get(), prefix);
    if (hinted && *hinted < max_ticket_number && claim(*hinted + 1)) return created();

    // readdir, not fs::directory_iterator: building a path per entry was most of a create's
    // own work on a board of 10,000 tickets.
    std::int64_t highest = 0;
    DIR* listing = ::fdopendir(::dup(tickets_fd.get()));
    if (!listing) return io_error("cannot list", tickets, errno);
    errno = 0;
    while (const dirent* entry = ::readdir(listing)) {
        if (const auto n = number_of(entry->d_name, prefix)) highest = std::max(highest, *n);
    }
    const int listing_error = errno;
    ::closedir(listing);
    if (listing_error != 0) return io_error("cannot list", tickets, listing_error);

    // The lock makes the first number free for every cooperating writer; a taken one can only
    // come from one that bypassed it, and then the next number is as good, so step past it a
    // bounded number of times.
    for (std::int64_t n = highest + 1; n <= std::min(highest + 1000, max_ticket_number); ++n)
        if (claim(n)) return created();
    return BoardDirError{
        Kind::exhausted,
        fmt::format("no free ticket number for prefix {} in {}", prefix, tickets.string())};
}

BoardDirResult<std::filesystem::path> private_folder(const std::filesystem::path& board_root) {
    const std::filesystem::path dir = board_root / ".board";
    const auto refuse = [&](std::string why) {
        return BoardDirError{BoardDirError::Kind::io, dir.string() + ": " + std::move(why)};
    };
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
        return refuse(fmt::format("cannot create it: {}", std::strerror(errno)));

    struct stat st {};

    if (::lstat(dir.c_str(), &st) != 0)
        return refuse(fmt::format("cannot read it: {}", std::strerror(errno)));
    if (!S_ISDIR(st.st_mode)) return refuse("not a folder (a link or a file): remove it");
    if (st.st_uid != ::geteuid())
        return refuse(
            fmt::format("owned by uid {}, not by this user (uid {})", st.st_uid, ::geteuid()));
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
        return refuse(
            fmt::format("others can write it (mode {:o}): chmod go-w it", st.st_mode & 0777U));
    return dir;
}

}  // namespace board
