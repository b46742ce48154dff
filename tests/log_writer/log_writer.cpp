// board_log_writer DIR N: appends N `note` events to the ticket folder DIR, one transact() each,
// and after each one is acknowledged (durable) writes its seq on a line to standard output.
// The event log's tests run several of these at once, and SIGKILL them mid-write, to check the
// lock and the recovery with real processes. If the log is empty it creates the ticket first.
//
// board_log_writer --board ROOT N ID...: N operations on the board at ROOT, as `board create`
// and `board note` do them. Every tenth claims the next id under the board lock, writes its
// `created` and its snapshot, and prints `created ID`; the others append a note to one of the
// IDs in turn under that ticket's lock and print `note ID SEQ`. Each line is written once the
// event is durable. Notes leave the snapshot (a cache) alone: re-encoding tickets that grow to
// 1,800 notes after each of 3,600 appends made the test 8 times slower, and tested nothing
// the log does. The mixed-writers test runs several at once.
#include <board/board_config.hpp>
#include <board/board_dir.hpp>
#include <board/catalog.hpp>
#include <board/event_log.hpp>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <unistd.h>
#include <variant>
#include <vector>

namespace {

bool write_all(int fd, std::string_view text) {
    while (!text.empty()) {
        const auto n = ::write(fd, text.data(), text.size());
        if (n <= 0) return false;
        text.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

std::optional<long> parse_count(std::string_view text) {
    long count = 0;
    if (std::from_chars(text.data(), text.data() + text.size(), count).ec != std::errc{} ||
        count < 0) {
        std::fprintf(stderr,
                     "board_log_writer: N must be a count, got \"%.*s\"\n",
                     static_cast<int>(text.size()),
                     text.data());
        return std::nullopt;
    }
    return count;
}

/// Why a transact() did not commit, on stderr; true if it did.
bool committed(const board::TransactResult& result) {
    if (const auto* error = std::get_if<board::LogError>(&result)) {
        std::fprintf(stderr, "board_log_writer: %s\n", error->message.c_str());
        return false;
    }
    if (const auto* refused = std::get_if<board::Refused>(&result)) {
        std::fprintf(stderr, "board_log_writer: refused: %s\n", refused->rejection.message.c_str());
        return false;
    }
    return true;
}

constexpr auto lock_timeout = std::chrono::seconds{120};  // 8 writers under ASan queue a while

int mixed(const std::filesystem::path& root, long count, const std::vector<std::string>& ids) {
    const auto config = board::load_board_config(root / "board.yaml");
    if (!config) {
        std::fprintf(stderr, "board_log_writer: %s\n", config.error().message.c_str());
        return 1;
    }
    board::LogOptions options;
    options.lock_timeout = lock_timeout;
    const board::Actor by{board::ActorKind::human, "writer"};
    const std::string me = std::to_string(::getpid());
    // One log per ticket kept open, as the daemon keeps them: a fresh one per note would
    // replay a log that every writer makes longer.
    std::map<std::string, board::EventLog> logs;
    for (long i = 0; i < count; ++i) {
        if (i % 10 == 0) {
            bool built = false;
            const board::TicketFiller fill = [&](const std::string& new_id,
                                                 const std::filesystem::path& folder) {
                const auto result = board::transact(
                    folder,
                    by,
                    [&](const board::Ticket&) {
                        board::Created created;
                        created.ticket = new_id;
                        created.title = "Created by board_log_writer " + me;
                        return std::vector<board::Payload>{std::move(created)};
                    },
                    options);
                built = committed(result);
                if (built)
                    (void)board::write_snapshot(folder, *std::get<board::Committed>(result).ticket);
                return built;
            };
            auto id = board::create_ticket_folder(root, config.value().prefix, fill, lock_timeout);
            if (!id) {
                if (!built)
                    std::fprintf(stderr, "board_log_writer: %s\n", id.error().message.c_str());
                return 1;
            }
            if (!write_all(1, "created " + id.value() + "\n")) return 1;
            continue;
        }
        const std::string& id = ids[static_cast<std::size_t>(i) % ids.size()];
        const auto dir = root / "tickets" / id;
        auto& log = logs.try_emplace(id, dir, options).first->second;
        const auto result = log.transact(by, [&](const board::Ticket&) {
            return std::vector<board::Payload>{
                board::NoteAdded{"note " + std::to_string(i) + " from " + me}};
        });
        if (!committed(result)) return 1;
        const auto& done = std::get<board::Committed>(result);
        if (!write_all(1, "note " + id + " " + std::to_string(done.events.back().seq) + "\n"))
            return 1;
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc >= 5 && std::string_view{argv[1]} == "--board") {
        const auto count = parse_count(argv[3]);
        if (!count) return 2;
        return mixed(argv[2], *count, std::vector<std::string>(argv + 4, argv + argc));
    }
    if (argc != 3) {
        std::fprintf(stderr, "usage: board_log_writer DIR N | --board ROOT N ID...\n");
        return 2;
    }
    const auto parsed = parse_count(argv[2]);
    if (!parsed) return 2;
    const long count = *parsed;
    board::LogOptions options;
    options.lock_timeout = lock_timeout;
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
        if (!committed(result)) return 1;
        const auto& done = std::get<board::Committed>(result);
        // write(2), not stdio: a SIGKILL must not swallow an acknowledgement in a buffer.
        if (!write_all(1, std::to_string(done.events.back().seq) + "\n")) return 1;
    }
    return 0;
}
