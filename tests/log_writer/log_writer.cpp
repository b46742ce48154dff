// board_log_writer DIR N: appends N `note` events to the ticket folder DIR, one transact() each,
// and after each one is acknowledged (durable) writes its seq on a line to standard output.
// The event log's tests run several of these at once, and SIGKILL them mid-write, to check the
// lock and the recovery with real processes. If the log is empty it creates the ticket first.
#include <board/event_log.hpp>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>
#include <unistd.h>
#include <variant>

namespace {

bool write_all(int fd, std::string_view text) {
    while (!text.empty()) {
        const auto n = ::write(fd, text.data(), text.size());
        if (n <= 0) return false;
        text.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: board_log_writer DIR N\n");
        return 2;
    }
    const std::string_view count_text{argv[2]};
    long count = 0;
    if (std::from_chars(count_text.data(), count_text.data() + count_text.size(), count).ec !=
            std::errc{} ||
        count < 0) {
        std::fprintf(stderr, "board_log_writer: N must be a count, got \"%s\"\n", argv[2]);
        return 2;
    }
    board::LogOptions options;
    options.lock_timeout = std::chrono::seconds{120};  // 8 writers under ASan queue a while
    board::EventLog log{argv[1], options};
    const board::Actor by{board::ActorKind::human, "writer"};
    const std::string me = std::to_string(::getpid());
    for (long i = 0; i < count; ++i) {
        auto result = log.transact(by, [&](const board::Ticket& t) {
            std::vector<board::Payload> batch;
            if (t.id.empty()) {
                board::Created created;
                created.ticket = "PROJ-1";
                created.title = "Written by board_log_writer";
                batch.emplace_back(std::move(created));
            }
            batch.emplace_back(board::NoteAdded{"note " + std::to_string(i) + " from " + me});
            return batch;
        });
        if (auto* error = std::get_if<board::LogError>(&result)) {
            std::fprintf(stderr, "board_log_writer: %s\n", error->message.c_str());
            return 1;
        }
        if (auto* refused = std::get_if<board::Refused>(&result)) {
            std::fprintf(
                stderr, "board_log_writer: refused: %s\n", refused->rejection.message.c_str());
            return 1;
        }
        const auto& committed = std::get<board::Committed>(result);
        // write(2), not stdio: a SIGKILL must not swallow an acknowledgement in a buffer.
        if (!write_all(1, std::to_string(committed.events.back().seq) + "\n")) return 1;
    }
    return 0;
}
