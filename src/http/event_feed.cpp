#include "http/event_feed.hpp"

#include "event_log/posix_file.hpp"
#include "support/unique_fd.hpp"

#include <board/board_dir.hpp>
#include <board/codec.hpp>
#include <board/event_log.hpp>
#include <board/ticket.hpp>

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace board::http {
namespace {

using Fd = UniqueFd;

/// [offset, size) of the log (it grows by small appends between reads), or nullopt when it
/// cannot be read: nothing is sent and the next poll tries again.
std::optional<std::string> read_range(int fd,
                                      std::uint64_t offset,
                                      std::uint64_t size,
                                      const std::string& path) {
    std::string out(size - offset, '\0');
    const auto read = event_log_detail::pread_full(fd, out.data(), out.size(), offset, path);
    if (!std::holds_alternative<std::size_t>(read)) return std::nullopt;
    out.resize(std::get<std::size_t>(read));
    return out;
}

}  // namespace

std::string sse_frame(std::string_view id, std::string_view data, std::string_view event) {
    std::string out;
    out.reserve(id.size() + data.size() + event.size() + 24);
    if (!event.empty()) out.append("event: ").append(event).append("\n");
    if (!id.empty()) out.append("id: ").append(id).append("\n");
    out.append("data: ").append(data).append("\n\n");  // data is one JSON line: no newline
    return out;
}

EventFeed::EventFeed(fs::path board, std::uint64_t first_id, std::size_t capacity)
    : tickets_(tickets_dir(board))
    , first_id_(first_id)
    , next_id_(first_id)
    , capacity_(std::max<std::size_t>(capacity, 1)) {}

void EventFeed::prime() {
    std::error_code ec;
    for (fs::directory_iterator it{tickets_, ec}, end; !ec && it != end; it.increment(ec)) {
        const std::string id = it->path().filename().string();
        if (!is_valid_ticket_id(id)) continue;

        struct stat st {};

        if (::stat((it->path() / std::string{log_file_name}).c_str(), &st) != 0) continue;
        tails_[id] = Tail{static_cast<std::uint64_t>(st.st_size), -1, st.st_ino};
    }
}

std::vector<std::string> EventFeed::changed_since_last_read() const {
    std::vector<std::string> out;
    std::error_code ec;
    for (fs::directory_iterator it{tickets_, ec}, end; !ec && it != end; it.increment(ec)) {
        std::string id = it->path().filename().string();
        if (!is_valid_ticket_id(id)) continue;

        struct stat st {};

        if (::stat((it->path() / std::string{log_file_name}).c_str(), &st) != 0) continue;
        const auto known = tails_.find(id);
        if (known == tails_.end() || known->second.inode != st.st_ino ||
            known->second.offset != static_cast<std::uint64_t>(st.st_size))
            out.push_back(std::move(id));
    }
    return out;
}

std::vector<FeedEvent> EventFeed::poll(std::string_view ticket) {
    std::vector<FeedEvent> out;
    if (!is_valid_ticket_id(ticket)) return out;  // before any path is formed
    const fs::path log = tickets_ / std::string{ticket} / std::string{log_file_name};
    Fd file{::open(log.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW)};
    if (!file) return out;

    struct stat st {};

    if (::fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode)) return out;
    Tail& tail = tails_.try_emplace(std::string{ticket}).first->second;
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (tail.inode != st.st_ino || size < tail.offset) {
        // Replaced or truncated (a torn tail cut off, a hand edit): read it again from the
        // start; the seq check below keeps what was sent from being sent twice.
        tail.offset = 0;
        tail.inode = st.st_ino;
    }
    if (size == tail.offset) return out;

    std::uint64_t start = tail.offset;
    if (start > 0) {
        // Primed from the size alone while a writer was mid-line: resume at the next line.
        char before = '\n';
        if (::pread(file.get(), &before, 1, static_cast<off_t>(start - 1)) != 1) return out;
        if (before != '\n') {
            const auto rest = read_range(file.get(), start, size, log.string());
            if (!rest) return out;
            const auto nl = rest->find('\n');
            if (nl == std::string::npos) return out;  // still mid-line
            start += nl + 1;
            tail.offset = start;
        }
    }
    auto read = read_range(file.get(), start, size, log.string());
    if (!read) return out;
    std::string& text = *read;
    const auto last_nl = text.rfind('\n');
    if (last_nl == std::string::npos) return out;  // a line still being written
    text.resize(last_nl + 1);
    tail.offset = start + text.size();

    std::size_t pos = 0;
    while (pos < text.size()) {
        const auto nl = text.find('\n', pos);
        const std::string_view line{text.data() + pos, nl - pos};
        pos = nl + 1;
        if (line.empty()) continue;
        auto decoded = decode_event(line);
        if (!decoded) continue;  // `board verify` reports it; the stream has nothing to say
        const Event& event = decoded.value();
        if (tail.last_seq >= 0 && event.seq <= tail.last_seq) continue;
        tail.last_seq = event.seq;

        FeedEvent item;
        item.id = next_id_++;
        item.ticket = std::string{ticket};
        item.seq = event.seq;
        item.data.reserve(line.size() + ticket.size() + 64);
        item.data.append("{\"ticket\":\"").append(ticket).append("\",\"seq\":");
        item.data.append(std::to_string(event.seq)).append(",\"type\":\"");
        item.data.append(type_name(event.payload)).append("\",\"event\":");
        item.data.append(line).append("}");
        journal_.push_back(item);
        if (journal_.size() > capacity_) journal_.pop_front();
        out.push_back(std::move(item));
    }
    return out;
}

std::optional<std::vector<const FeedEvent*>> EventFeed::since(std::uint64_t id) const {
    const std::uint64_t oldest = journal_.empty() ? next_id_ : journal_.front().id;
    // Exact only from the id just before the oldest kept event up to the last one issued.
    if (id + 1 < oldest || id >= next_id_ || id + 1 < first_id_) return std::nullopt;
    std::vector<const FeedEvent*> out;
    // Journaled ids are contiguous, so the first one to send is at a known index.
    for (auto i = static_cast<std::size_t>(id + 1 - oldest); i < journal_.size(); ++i)
        out.push_back(&journal_[i]);
    return out;
}

}  // namespace board::http
