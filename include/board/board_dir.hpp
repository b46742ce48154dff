#pragma once
// The board folder (spec/storage.md): where a board is, where a ticket lives, and how a new
// ticket is made, whole or not at all. Ids are validated before they become paths, so `../x`
// never reaches disk.

#include <board/expected.hpp>
#include <board/ticket.hpp>

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace board {

/// Why a board folder operation failed.
struct BoardDirError {
    enum class Kind {
        invalid_id,    ///< an id or prefix that does not match the spec's pattern
        lock_timeout,  ///< another process held the board lock for the whole timeout
        io,            ///< the file system refused (permissions, missing board, full disk)
        exhausted,     ///< PREFIX-999999999 is taken: no 9-digit number left
        declined,      ///< the filler gave the ticket up; nothing was left on disk
    };
    Kind kind = Kind::io;
    std::string message;  ///< one sentence naming the path or id, e.g. with strerror
    friend bool operator==(const BoardDirError&, const BoardDirError&) = default;
};

/// A value, or why not.
template <class T>
using BoardDirResult = Expected<T, BoardDirError>;

/// `<board_root>/.board`, the board's private folder (the HTTP token, the daemon's query
/// socket, worktrees), made owner-only when missing. Refused (`io`, one sentence saying what
/// to do) when it is a link or not a folder, or when others may write it, as ssh refuses such
/// a `~/.ssh`: whoever can write it can replace the token or the socket.
BoardDirResult<std::filesystem::path> private_folder(const std::filesystem::path& board_root);

/// The nearest folder holding a `board.yaml`: `start_dir` itself, else its closest ancestor
/// (made absolute first). nullopt if none up to the root. `--board` and `$BOARD_DIR` take
/// precedence and are the caller's business.
std::optional<std::filesystem::path> find_board(const std::filesystem::path& start_dir);

/// `<board_root>/tickets`.
std::filesystem::path tickets_dir(const std::filesystem::path& board_root);

/// `<board_root>/.board/worktrees/<id>`: the git worktree a ticket's work is done in, on its
/// branch ticket_branch(id). Touches no disk.
std::filesystem::path worktree_dir(const std::filesystem::path& board_root, std::string_view id);

/// `<run>-<phase>`: the stem of a run's files in `tickets/<ID>/runs/` (its `.prompt.md`, its
/// `.log` and its folder).
std::string run_file_stem(std::string_view run, Status phase);

/// `<board_root>/tickets/<id>`, or nullopt when `id` is not a valid ticket id
/// (is_valid_ticket_id): the check comes before any path is formed. Touches no disk.
std::optional<std::filesystem::path> ticket_dir(const std::filesystem::path& board_root,
                                                std::string_view id);

/// Fills a new ticket's folder before anyone can see it: `folder` is empty and private to this
/// create, `id` the name it will have. True to keep what was written; false to abandon the
/// ticket (the caller's own result says why). Runs under the board lock: keep it to the
/// ticket's own files.
using TicketFiller =
    std::function<bool(const std::string& id, const std::filesystem::path& folder)>;

/// Creates ticket `PREFIX-N` whole, or not at all, and returns its id. N = 1 + the largest N
/// of any `PREFIX-N` entry in `tickets/` (1 if none). Under an exclusive flock on
/// `tickets/.lock`: `fill` writes the ticket's files into the staging folder
/// `tickets/.creating`, which is synced and renamed to `tickets/PREFIX-N` (never over an
/// existing entry), and `tickets/` is synced before the id is returned. A create killed at any
/// point leaves at most the staging folder, which the next create removes: no reader ever sees
/// a ticket folder without its log. Concurrent callers in any processes get distinct,
/// contiguous ids. Creates `tickets/` if missing.
/// Errors: invalid prefix, lock not acquired within `lock_timeout`, I/O, numbers exhausted,
/// declined (`fill` returned false; nothing is left on disk).
BoardDirResult<std::string> create_ticket_folder(
    const std::filesystem::path& board_root,
    std::string_view prefix,
    const TicketFiller& fill,
    std::chrono::milliseconds lock_timeout = std::chrono::seconds{10});

}  // namespace board
