#pragma once
// What the live stream sends: the events appended to the board's logs since the server
// started, each numbered by one server-wide counter, the recent ones kept in a bounded
// journal for `Last-Event-ID` resume (include/board/http.hpp explains the numbering).
//
// Reading is incremental: per ticket, the byte offset and last seq already seen. A log read
// again starts at its offset, so telling the feed about every append of a 5,000-event burst
// costs 5,000 small reads, not 5,000 re-reads of a growing file. A log that shrank or was
// replaced (another inode) is read from the start, and events at or below the last seq seen
// are skipped, so nothing is sent twice. Pure of sockets; single-threaded.

#include <cstdint>
#include <deque>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <unordered_map>
#include <vector>

namespace board::http {

struct FeedEvent {
    std::uint64_t id = 0;  ///< the server-wide number (the SSE id of the unfiltered stream)
    std::string ticket;
    std::int64_t seq = 0;
    std::string data;  ///< `{"ticket":..,"seq":..,"type":..,"event":{the log line}}`
};

/// One SSE frame: `id: <id>\ndata: <data>\n\n`.
std::string sse_frame(std::string_view id, std::string_view data, std::string_view event = {});

class EventFeed {
public:
    /// Ids start at `first_id`; at most `capacity` events are kept (at least 1).
    EventFeed(std::filesystem::path board, std::uint64_t first_id, std::size_t capacity);

    /// Notes the end of every log on the board now: what is there is history, not news.
    void prime();
    /// Reads what `ticket`'s log gained since last time, journals it and returns it (in seq
    /// order). Invalid ids, missing logs and undecodable lines yield nothing.
    std::vector<FeedEvent> poll(std::string_view ticket);
    /// The tickets whose log differs (size, inode) from what was last read, or is new.
    std::vector<std::string> changed_since_last_read() const;

    /// The events after `id`, or nullopt when the journal cannot say exactly (the id is older
    /// than the journal, or from another server run): the client must reload.
    std::optional<std::vector<const FeedEvent*>> since(std::uint64_t id) const;

    /// The id of the last event journaled (first_id - 1 before any).
    std::uint64_t last_id() const { return next_id_ - 1; }

private:
    struct Tail {
        std::uint64_t offset = 0;
        std::int64_t last_seq = 0;  ///< -1: not known (primed from the size alone)
        ino_t inode = 0;
    };

    std::filesystem::path tickets_;
    std::uint64_t first_id_;
    std::uint64_t next_id_;
    std::size_t capacity_;
    std::unordered_map<std::string, Tail> tails_;
    std::deque<FeedEvent> journal_;
};

}  // namespace board::http
