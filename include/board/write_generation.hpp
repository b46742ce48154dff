#pragma once
// The board's write generation: `tickets/.generation`, a counter every board writer moves
// around each change to a log, so a reader can tell "no log changed since I last looked"
// with one small read instead of statting every log (10,000 stats are 28 ms on our VM).
//
// Protocol (the event log follows it; nothing else writes a log):
// - A writer bumps the counter BEFORE it changes a log (append, torn-tail cut) and AGAIN
//   once the change is on disk. A reader that reads the generation, then checks the logs,
//   may record what it saw under that generation: any change it could have missed ends with
//   a bump after its read, so a later reader sees another generation and checks again.
//   (The one change that can slip by: a writer killed between its write and its second bump
//   while a reader checked that very log; the next write to the board, anywhere, ends it.)
// - The file holds a random nonce and the counter. A reader creates it whole (temp file + link),
//   never rewritten, and bumped with an atomic add on a shared mapping, so concurrent
//   writers in different processes never lose a bump. A file removed or replaced comes back
//   with another nonce, so a generation recorded before never matches it again.
// - Bumps are not synced: after a power cut the counter may go back. Readers pair it with the
//   boot id (boot_id() below), which a reboot changes.
//
// Writers that do not follow the protocol (an editor, `cp`, `git pull`) are not seen by the
// generation; see catalog.hpp for how readers notice them.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace board {

inline constexpr std::string_view generation_file_name = ".generation";

struct WriteGeneration {
    std::uint64_t nonce = 0;
    std::uint64_t counter = 0;
    friend bool operator==(const WriteGeneration&, const WriteGeneration&) = default;
};

/// Bumps `tickets_dir/.generation` if it exists (while it does not, no reader can trust an
/// index by it, so there is nothing to tell). Never throws. If the file exists but cannot be
/// bumped (permissions, a damaged file), it is removed, so readers fall back to checking
/// every log rather than trusting a generation that no longer moves.
void bump_write_generation(const std::filesystem::path& tickets_dir) noexcept;

/// Creates `tickets_dir/.generation` (a new nonce, counter 0) unless it exists: what a reader
/// does before the first check it wants to record. Never throws; best effort.
void start_write_generation(const std::filesystem::path& tickets_dir) noexcept;

/// The generation of the board whose `tickets/` folder is open as `tickets_fd`; nullopt when
/// there is none yet (no board writer has run) or it cannot be read: check every log then.
std::optional<WriteGeneration> read_write_generation(int tickets_fd) noexcept;

/// This boot's id (`/proc/sys/kernel/random/boot_id`); empty if it cannot be read.
std::string boot_id();

}  // namespace board
