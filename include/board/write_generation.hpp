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
// - Each bump also writes, in a ring of the last `touch_slot_count` bumps kept in the same
//   file, which ticket's log it is about and on which side of the change it is. So a reader
//   that recorded generation G and now reads G' need only check the tickets that bumps
//   G+1..G' name, not every log (a board a daemon writes moves its generation all the time).
//   It falls back to checking every log when the ring no longer holds them all, a slot is
//   not whole (being written, or mixed with the bump 512 later that shares it: each slot
//   carries a check word over its number and payload), or a bump names no ticket (`board
//   verify`: any log may have changed).
// - A change begun and not ended (a writer still writing, or killed between its two bumps)
//   stays in every later reader's window: a reader records no generation past the first
//   bump of a change it did not see end (Touched::settled), nor, after checking every log,
//   past a recent slot it could not read. So the log of a writer killed mid-change is
//   checked by every reader until a reader checks every log.
// - The file holds a random nonce, the counter and the ring. A reader creates it whole (temp
//   file + link), it is never rewritten, and the counter is bumped with an atomic add on a
//   shared mapping, so concurrent writers in different processes never lose a bump. A file
//   removed or replaced comes back with another nonce, so a generation recorded before never
//   matches it again.
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
#include <vector>

namespace board {

inline constexpr std::string_view generation_file_name = ".generation";

/// How many bumps the ring remembers: a reader whose recorded generation is further behind
/// checks every log.
inline constexpr std::uint64_t touch_slot_count = 512;

struct WriteGeneration {
    std::uint64_t nonce = 0;
    std::uint64_t counter = 0;
    friend bool operator==(const WriteGeneration&, const WriteGeneration&) = default;
};

/// Which side of a change to a log a bump is on. `touch`: a log found changed by something
/// that is not a board writer (a corrupt read, `board verify`): its ticket is checked again,
/// but no change of a board writer begins or ends with it.
enum class BumpSide : std::uint8_t { before = 1, after = 2, touch = 3 };

/// Bumps `tickets_dir/.generation` if it exists (while it does not, no reader can trust an
/// index by it, so there is nothing to tell), noting `ticket` (the folder name of the log
/// that changes; empty: any log may have changed) in the ring. Never throws. If the file
/// exists but cannot be bumped (permissions, a damaged file), it is removed, so readers fall
/// back to checking every log rather than trusting a generation that no longer moves.
void bump_write_generation(const std::filesystem::path& tickets_dir,
                           std::string_view ticket,
                           BumpSide side) noexcept;

/// Creates `tickets_dir/.generation` (a new nonce, counter 0) unless it exists whole (one of
/// another size, damaged or of an older layout, is replaced): what a reader
/// does before the first check it wants to record. Never throws; best effort.
void start_write_generation(const std::filesystem::path& tickets_dir) noexcept;

/// The generation of the board whose `tickets/` folder is open as `tickets_fd`; nullopt when
/// there is none yet (no board writer has run) or it cannot be read: check every log then.
std::optional<WriteGeneration> read_write_generation(int tickets_fd) noexcept;

/// What the bumps after a recorded generation say.
struct Touched {
    /// Every ticket whose log was changed, or began to be, by those bumps; each once.
    std::vector<std::string> tickets;
    /// The highest counter a reader that checks `tickets` now may record: every change begun
    /// at or before it had ended when the ring was read (a change seen to begin and not end
    /// keeps it below that change's first bump).
    std::uint64_t settled = 0;
};

/// The board's generation file mapped read-only for one load: the generation, then the ring.
class GenerationView {
public:
    /// Maps `.generation` of the `tickets/` folder open as `tickets_fd`, if there is one.
    explicit GenerationView(int tickets_fd) noexcept;
    ~GenerationView();
    GenerationView(const GenerationView&) = delete;
    GenerationView& operator=(const GenerationView&) = delete;

    /// The generation now; nullopt when the file is missing or damaged.
    std::optional<WriteGeneration> generation() const noexcept;

    /// The tickets that bumps numbered `since`+1 to `until` name (see Touched). nullopt when
    /// the ring cannot tell: more than touch_slot_count bumps, a slot overwritten or not
    /// written yet, a bump that names no ticket, no file. Precondition: since <= until.
    std::optional<Touched> touched(std::uint64_t since, std::uint64_t until) const;

    /// For a reader that checked every log after reading `counter`: the highest counter it
    /// may record, below the first bump of any change the ring shows begun and not ended, and
    /// below any of the last touch_slot_count bumps whose slot it cannot read.
    std::uint64_t settled_after_full_check(std::uint64_t counter) const noexcept;

private:
    std::uint64_t* words_ = nullptr;  ///< nonce, counter, then the ring's slots
};

/// This boot's id (`/proc/sys/kernel/random/boot_id`); empty if it cannot be read.
std::string boot_id();

}  // namespace board
