#pragma once
// Reading a log: lines streamed through a reusable buffer and decoded where they lie, and
// what a crash may leave at the end (a torn tail), moved aside under the ticket lock.

#include "event_log/posix_file.hpp"
#include "support/unique_fd.hpp"

#include <board/codec.hpp>
#include <board/event_log.hpp>

#include <fmt/format.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace board::event_log_detail {

constexpr std::size_t chunk_size = 256 * 1024;

/// Where a scan resumes: the end of the last complete, valid line.
struct Position {
    std::uint64_t offset = 0;
    std::int64_t line = 0;
    std::int64_t last_seq = 0;
};

/// A tail that a crash left behind: from `offset` (line `line`) to the end of the file.
struct Torn {
    std::uint64_t offset = 0;
    std::int64_t line = 0;
    std::string reason;
};

/// Streams lines through a reusable chunk buffer. A line inside one chunk is decoded where it
/// lies; only a line that spans chunks is copied (into `carry_`, reused too).
class Scanner {
public:
    explicit Scanner(std::string path)
        : path_(std::move(path)) {}

    const std::string& path() const { return path_; }

    /// Scans [pos.offset, end) of `fd`, handing each valid event to `sink(Event&&, line)`,
    /// which may refuse it with an error. Advances `pos` past each accepted line. Returns the
    /// torn tail if the last line is one.
    template <class Sink>
    LogResult<std::optional<Torn>> scan(int fd, std::uint64_t end, Position& pos, Sink&& sink);

private:
    LogError too_long(const Position& pos) const {
        return LogError{LogError::Kind::corrupt,
                        fmt::format("{}:{}: the line is longer than the {} bytes a log line "
                                    "may hold; it was not read (no board tool writes one)",
                                    path_,
                                    pos.line + 1,
                                    max_event_line_bytes)};
    }

    std::string path_;
    EventDecoder decoder_;
    std::string buffer_;
    std::string carry_;
};

template <class Sink>
LogResult<std::optional<Torn>> Scanner::scan(int fd,
                                             std::uint64_t end,
                                             Position& pos,
                                             Sink&& sink) {
    // No bigger than what is left to read: most logs are a few KiB, and zeroing (and
    // faulting in) a whole chunk for each of them cost more than reading them (`verify`
    // opens every log of the board once).
    const std::size_t wanted = static_cast<std::size_t>(
        std::min<std::uint64_t>(chunk_size, end - std::min(end, pos.offset)));
    if (buffer_.size() < wanted) buffer_.resize(wanted);
    carry_.clear();
    std::uint64_t read_at = pos.offset;
    while (read_at < end) {
        const auto want =
            static_cast<std::size_t>(std::min<std::uint64_t>(chunk_size, end - read_at));
        auto got = pread_full(fd, buffer_.data(), want, read_at, path_);
        if (auto* e = std::get_if<LogError>(&got)) return std::move(*e);
        const std::size_t n = std::get<std::size_t>(got);
        if (n == 0) {
            // The file shrank under an unlocked reader (a writer recovering a torn tail):
            // what is left to read is gone, so the rest counts as torn for this pass.
            end = read_at;
            break;
        }
        const char* const base = buffer_.data();
        const char* p = base;
        const char* const stop = base + n;
        while (p < stop) {
            const auto* nl =
                static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(stop - p)));
            if (!nl) break;
            if (carry_.size() + static_cast<std::size_t>(nl - p) > max_event_line_bytes)
                return too_long(pos);
            std::string_view line;
            if (carry_.empty()) {
                line = std::string_view{p, static_cast<std::size_t>(nl - p)};
            } else {
                carry_.append(p, nl);
                line = carry_;
            }
            const std::uint64_t line_end = read_at + static_cast<std::uint64_t>(nl - base) + 1;
            const std::int64_t number = pos.line + 1;
            auto decoded = decoder_.decode(line);
            if (!decoded) {
                const CodecError& error = decoded.error();
                // Not even well-formed JSON on the very last line: a write cut short by a
                // crash, not corruption. A well-formed line that fails the schema is real.
                if (error.field.empty() && line_end == end) {
                    return std::optional<Torn>{Torn{pos.offset, number, error.message}};
                }
                const bool newer =
                    error.field == "v" && error.message.find("newer") != std::string::npos;
                return LogError{newer ? LogError::Kind::newer_version : LogError::Kind::corrupt,
                                fmt::format("{}:{}: {}", path_, number, error.message)};
            }
            Event& event = decoded.value();
            if (event.seq != pos.last_seq + 1) {
                const std::string why =
                    event.seq <= pos.last_seq
                        ? fmt::format("seq {} follows seq {} (a duplicate or out of order)",
                                      event.seq,
                                      pos.last_seq)
                        : fmt::format("seq {} follows seq {} (a gap: {} is missing)",
                                      event.seq,
                                      pos.last_seq,
                                      pos.last_seq + 1);
                return LogError{LogError::Kind::corrupt,
                                fmt::format("{}:{}: {}", path_, number, why)};
            }
            const std::int64_t seq = event.seq;
            if (std::optional<LogError> refused = sink(std::move(event), number)) {
                return std::move(*refused);
            }
            pos.offset = line_end;
            pos.line = number;
            pos.last_seq = seq;
            carry_.clear();
            p = nl + 1;
        }
        // A line still open past the limit is refused before more of it is held.
        if (carry_.size() + static_cast<std::size_t>(stop - p) > max_event_line_bytes)
            return too_long(pos);
        carry_.append(p, stop);
        read_at += n;
    }
    if (pos.offset < end) {
        return std::optional<Torn>{Torn{pos.offset, pos.line + 1, "the last line has no newline"}};
    }
    return std::optional<Torn>{};
}

/// Moves [torn.offset, end) of the locked, writable `fd` to the `.torn` file and truncates
/// the log there. Both files are synced before the log shrinks, so a crash in between leaves
/// the bytes in both places rather than in neither.
LogResult<std::uint64_t> recover_torn_tail(int fd,
                                           const std::string& path,
                                           const Torn& torn,
                                           std::uint64_t end,
                                           std::vector<std::string>& warnings);

/// Opens the log for writing, creating it (and syncing the folder) if it does not exist yet.
LogResult<UniqueFd> open_for_append(const std::filesystem::path& dir, const std::string& path);

/// Opens a ticket's log (or its `.torn` beside it) with `flags`, only as a regular file of
/// its own in a real folder: a symbolic link at either step is refused, so no read, repair or
/// append of the board reaches a file elsewhere (a board cloned from someone else's repository
/// may hold such links; a path with no link on it at all is opened in one call). ENOENT gives
/// Kind::not_found, as errno_error does; `errno` is set on every failure. `opened_as`, when
/// given, receives the file's identity and size as it was opened.
LogResult<UniqueFd> open_log_file(const std::string& path,
                                  int flags,
                                  mode_t mode = 0,
                                  FileStat* opened_as = nullptr);

}  // namespace board::event_log_detail
