// Reading histories: the example board is a fixture every later version must still read, and
// a bad line is reported with its file and line, never skipped.

#include "support/source_dir.hpp"

#include <board/app.hpp>
#include <board/reduce.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace board;

namespace {

/// A scratch board folder, removed at the end of the test.
struct ScratchBoard {
    fs::path root =
        fs::temp_directory_path() / ("board-history-test-" + std::to_string(::getpid()));

    explicit ScratchBoard(const std::string& id, const std::string& log) {
        fs::create_directories(root / "tickets" / id);
        std::ofstream{root / "tickets" / id / "events.jsonl", std::ios::binary} << log;
    }

    ~ScratchBoard() {
        std::error_code ec;
        fs::remove_all(root, ec);
    }

    ScratchBoard(const ScratchBoard&) = delete;
    ScratchBoard& operator=(const ScratchBoard&) = delete;
};

}  // namespace

TEST_CASE("the example board still reads and folds to the states it shows", "[app][fixtures]") {
    struct Expected {
        const char* id;
        std::size_t events;
        Status status;
        std::optional<Awaiting> awaiting;
    };

    const Expected expected = GENERATE(values<Expected>({
        {"PROJ-1", 17, Status::done, std::nullopt},
        {"PROJ-2", 9, Status::ready, std::nullopt},
        {"PROJ-3", 3, Status::research, Awaiting::input},
        {"PROJ-4", 2, Status::backlog, std::nullopt},
    }));
    CAPTURE(expected.id);
    const auto history = app::Board{testing::source_dir()}.history(expected.id);
    REQUIRE(history);
    REQUIRE(history.value().events.size() == expected.events);
    const Folded folded = fold(history.value().events);
    REQUIRE_FALSE(folded.failure);
    CHECK(folded.ticket.status == expected.status);
    CHECK(folded.ticket.awaiting == expected.awaiting);
}

TEST_CASE("a corrupt line is reported with file and line number", "[app][history]") {
    const std::string good =
        R"({"v":1,"seq":1,"id":"e1","at":"2026-11-20T09:00:00.000Z","by":"human:ana","type":"created","ticket":"PROJ-1","title":"t"})"
        "\n";
    const std::string bad_seq =
        R"({"v":1,"seq":"two","id":"e2","at":"2026-11-20T09:00:01.000Z","by":"human:ana","type":"note","text":"x"})"
        "\n";
    ScratchBoard board{"PROJ-1", good + bad_seq + good};
    const auto history = app::Board{board.root}.history("PROJ-1");
    REQUIRE_FALSE(history);
    CHECK(history.error().kind == app::Refusal::Kind::storage);
    CHECK_THAT(history.error().message,
               Catch::Contains("events.jsonl:2:") && Catch::Contains("seq"));
}

TEST_CASE("ids are validated before they touch the disk", "[app][history][security]") {
    app::Board board{testing::source_dir()};
    const auto bad = board.history("../PROJ-1");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().kind == app::Refusal::Kind::not_found);
    CHECK_THAT(bad.error().message, Catch::Contains("not a ticket id"));
    const auto missing = board.history("PROJ-999");
    REQUIRE_FALSE(missing);
    CHECK_THAT(missing.error().message, Catch::Contains("no ticket PROJ-999"));
    CHECK(board.show("../../etc/passwd").error().kind == app::Refusal::Kind::not_found);
}

TEST_CASE("verify: faults for logs that do not replay, warnings for edited artifacts",
          "[app][verify]") {
    const std::string created =
        R"({"v":1,"seq":1,"id":"e1","at":"2026-11-20T09:00:00.000Z","by":"human:ana","type":"created","ticket":"PROJ-1","title":"t"})"
        "\n";
    const std::string artifact =
        R"({"v":1,"seq":2,"id":"e2","at":"2026-11-20T09:00:01.000Z","by":"human:ana","type":"artifact-recorded","kind":"research","path":"research.md","status":"in-progress","sha256":"0000000000000000000000000000000000000000000000000000000000000000"})"
        "\n";
    const std::string agent_verdict =
        R"({"v":1,"seq":2,"id":"e2","at":"2026-11-20T09:00:01.000Z","by":"agent:review","type":"cancelled"})"
        "\n";
    {
        ScratchBoard edited{"PROJ-1", created + artifact};
        std::ofstream{edited.root / "tickets" / "PROJ-1" / "research.md"} << "edited by hand\n";
        const auto report = app::Board{edited.root}.verify({"PROJ-1"}).at(0);
        CHECK(report.faults.empty());
        REQUIRE(report.warnings.size() == 1);
        CHECK_THAT(report.warnings[0], Catch::Contains("research.md was edited"));
    }
    {
        // The same event id twice in one log: an append applied twice.
        const std::string note =
            R"({"v":1,"seq":2,"id":"e1","at":"2026-11-20T09:00:01.000Z","by":"human:ana","type":"note","text":"again"})"
            "\n";
        ScratchBoard repeated{"PROJ-1", created + note};
        const auto report = app::Board{repeated.root}.verify({"PROJ-1"}).at(0);
        REQUIRE(report.faults.size() == 1);
        CHECK_THAT(report.faults[0], Catch::Contains("seq 2 repeats the event id e1 of seq 1"));
    }
    {
        ScratchBoard refused{"PROJ-1", created + agent_verdict};
        const auto report = app::Board{refused.root}.verify({"PROJ-1"}).at(0);
        REQUIRE(report.faults.size() == 1);
        CHECK_THAT(report.faults[0],
                   Catch::Contains("seq 2 does not replay") && Catch::Contains("only a human"));
    }
}

TEST_CASE(
    "verify: a torn tail is a fault once, then its .torn file a warning, an unlisted "
    "board and a ticket that is no folder are faults",
    "[app][verify]") {
    const std::string good =
        R"({"v":1,"seq":1,"id":"e1","at":"2026-11-20T09:00:00.000Z","by":"human:ana","type":"created","ticket":"PROJ-1","title":"t"})"
        "\n";
    ScratchBoard board{"PROJ-1", good + R"({"v":1,"seq":2,"id":"e2","at":"2026-11-20T09:0)"};
    const auto first = app::Board{board.root}.verify({}).at(0);
    REQUIRE(first.faults.size() == 1);
    CHECK_THAT(first.faults[0], Catch::Contains("incomplete") && Catch::Contains(".torn"));
    const auto second = app::Board{board.root}.verify({}).at(0);
    CHECK(second.faults.empty());
    const bool told = std::any_of(second.warnings.begin(), second.warnings.end(), [](auto& w) {
        return w.find("events.jsonl.torn holds") != std::string::npos;
    });
    CHECK(told);

    std::ofstream{board.root / "tickets" / "PROJ-2"} << "a file where a ticket's folder goes\n";
    const auto with_file = app::Board{board.root}.verify({});
    const bool named = std::any_of(with_file.begin(), with_file.end(), [](auto& r) {
        return r.ticket == "PROJ-2" && !r.faults.empty() &&
               r.faults[0].find("is not a folder") != std::string::npos;
    });
    CHECK(named);

    fs::rename(board.root / "tickets", board.root / "tickets.moved");
    const auto unlisted = app::Board{board.root}.verify({});
    REQUIRE(unlisted.size() == 1);
    REQUIRE(unlisted[0].faults.size() == 1);
    CHECK_THAT(unlisted[0].faults[0], Catch::Contains("cannot list"));
}

TEST_CASE("a torn tail is recovered with a warning, and the complete events are kept",
          "[app][history]") {
    const std::string good =
        R"({"v":1,"seq":1,"id":"e1","at":"2026-11-20T09:00:00.000Z","by":"human:ana","type":"created","ticket":"PROJ-1","title":"t"})"
        "\n";
    ScratchBoard board{"PROJ-1", good + R"({"v":1,"seq":2,"id":"e2","at":"2026-11-20T09:0)"};
    const auto history = app::Board{board.root}.history("PROJ-1");
    REQUIRE(history);
    CHECK(history.value().events.size() == 1);
    REQUIRE_FALSE(history.value().warnings.empty());
    CHECK_THAT(history.value().warnings[0], Catch::Contains("torn"));
    CHECK(fs::exists(board.root / "tickets" / "PROJ-1" / "events.jsonl.torn"));
}
