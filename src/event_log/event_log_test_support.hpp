#pragma once
// Shared by the event log tests: temp folders, file reads and writes, fixed options, tickets.

#include "support/temp_dir.hpp"

#include <board/codec.hpp>
#include <board/event_log.hpp>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <variant>
#include <vector>

namespace board::event_log_test {

namespace fs = std::filesystem;

inline constexpr UnixMillis t0 = 1'795'000'000'000;

/// A fresh folder under `root` (the system temp dir by default), removed at scope exit.
struct TempDir : testing::TempDir {
    explicit TempDir(const fs::path& root = fs::temp_directory_path())
        : testing::TempDir("board-event-log-", root) {}
};

inline std::string read_file(const fs::path& path) {
    std::ifstream in{path, std::ios::binary};
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

inline void write_file(const fs::path& path, std::string_view bytes) {
    std::ofstream out{path, std::ios::binary | std::ios::trunc};
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// Where the heavy tests write: they test the lock and the recovery, not the disk.
inline fs::path fast_root() {
    return board::testing::memory_backed_root();
}

inline Actor ana() {
    return {ActorKind::human, "ana"};
}

inline Created created_payload() {
    Created c;
    c.ticket = "PROJ-1";
    c.title = "A ticket for the event log tests";
    return c;
}

/// Deterministic clock and ids, so tests can assert on what was written.
inline LogOptions fixed_options() {
    LogOptions options;
    options.clock = [] { return t0; };
    options.new_id = [n = 0]() mutable { return "id" + std::to_string(++n); };
    return options;
}

/// The expected alternative of a result, by value (results are usually temporaries).
template <class T, class V>
T must_be(V result) {
    if (const auto* e = std::get_if<LogError>(&result)) FAIL_CHECK(e->message);
    REQUIRE(std::holds_alternative<T>(result));
    return std::get<T>(std::move(result));
}

inline Event note_event(std::string id, std::string text, UnixMillis at = t0) {
    return Event{event_schema_version, 0, std::move(id), at, ana(), NoteAdded{std::move(text)}};
}

/// A ticket folder whose log holds `created` and `notes` notes, written through transact.
inline void make_ticket(const fs::path& dir, int notes) {
    fs::create_directories(dir);
    EventLog log{dir, fixed_options()};
    must_be<Committed>(log.transact(ana(), [&](const Ticket&) {
        std::vector<Payload> batch{created_payload()};
        for (int i = 0; i < notes; ++i) {
            // Multi-byte text, so that some cuts fall inside a UTF-8 character.
            batch.emplace_back(NoteAdded{fmt::format("note {} – grüße ✓", i + 1)});
        }
        return batch;
    }));
}

}  // namespace board::event_log_test
