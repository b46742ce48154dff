#include "support/temp_dir.hpp"

#include <board/event_log.hpp>
#include <board/write_generation.hpp>

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <filesystem>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace board;

namespace {

struct Board : testing::TempDir {
    Board()
        : testing::TempDir("board-generation-") {
        fs::create_directories(tickets() / "PROJ-1");
    }

    fs::path tickets() const { return path() / "tickets"; }

    std::optional<WriteGeneration> read() const {
        const int fd = ::open(tickets().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        auto generation = read_write_generation(fd);
        ::close(fd);
        return generation;
    }
};

}  // namespace

TEST_CASE("every append moves the board's write generation, before and after the write",
          "[generation]") {
    const Board board;
    bump_write_generation(board.tickets(), "PROJ-1", BumpSide::before);
    CHECK_FALSE(board.read());  // writers never make the file: readers start it
    start_write_generation(board.tickets());
    REQUIRE(board.read());
    CHECK(board.read()->counter == 0);
    Created created;
    created.ticket = "PROJ-1";
    created.title = "generation";
    const auto first = transact(board.tickets() / "PROJ-1",
                                Actor{ActorKind::human, "ana"},
                                [&](const Ticket&) { return std::vector<Payload>{created}; });
    REQUIRE(std::holds_alternative<Committed>(first));
    const auto after_create = board.read();
    REQUIRE(after_create);
    CHECK(after_create->counter == 2);
    const auto noted =
        transact(board.tickets() / "PROJ-1", Actor{ActorKind::human, "ana"}, [](const Ticket&) {
            return std::vector<Payload>{NoteAdded{"a note"}};
        });
    REQUIRE(std::holds_alternative<Committed>(noted));
    CHECK(board.read()->counter == 4);
    CHECK(board.read()->nonce == after_create->nonce);
}

TEST_CASE("bumps from many processes at once are never lost", "[generation]") {
    const Board board;
    start_write_generation(board.tickets());
    const auto start = board.read();
    REQUIRE(start);
    constexpr int processes = 8;
    constexpr int bumps = 500;
    std::vector<pid_t> children;
    for (int p = 0; p < processes; ++p) {
        const pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            const std::string ticket = "PROJ-" + std::to_string(p + 1);
            for (int i = 0; i < bumps; ++i)
                bump_write_generation(
                    board.tickets(), ticket, i % 2 == 0 ? BumpSide::before : BumpSide::after);
            ::_exit(0);
        }
        children.push_back(pid);
    }
    for (const pid_t pid : children) {
        int status = 0;
        REQUIRE(::waitpid(pid, &status, 0) == pid);
        CHECK(WIFEXITED(status));
    }
    CHECK(board.read()->counter == start->counter + processes * bumps);
    // The ring holds the last bumps whole: every slot names one of the writers' tickets, and
    // each writer's bumps came in before/after pairs, so nothing is left open.
    const int fd = ::open(board.tickets().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    const GenerationView view{fd};
    ::close(fd);
    const auto end = board.read()->counter;
    const auto touched = view.touched(end - touch_slot_count, end);
    REQUIRE(touched);
    CHECK_FALSE(touched->tickets.empty());
    CHECK(touched->tickets.size() <= processes);
    for (const auto& ticket : touched->tickets) CHECK(ticket.starts_with("PROJ-"));
    CHECK(touched->settled == end);
}

TEST_CASE("a generation file removed or damaged comes back with another nonce", "[generation]") {
    const Board board;
    start_write_generation(board.tickets());
    bump_write_generation(board.tickets(), "PROJ-1", BumpSide::after);
    const auto before = board.read();
    REQUIRE(before);
    const fs::path file = board.tickets() / std::string{generation_file_name};
    SECTION("removed") {
        fs::remove(file);
    }
    SECTION("truncated by hand") {
        fs::resize_file(file, 3);
    }
    bump_write_generation(board.tickets(), "PROJ-1", BumpSide::after);  // a damaged file goes
    CHECK_FALSE(board.read());
    start_write_generation(board.tickets());  // and the next reader makes a new one
    const auto after = board.read();
    REQUIRE(after);
    CHECK(after->nonce != before->nonce);
}

TEST_CASE("the ring names the tickets bumped since a generation, and the changes still open",
          "[generation]") {
    const Board board;
    start_write_generation(board.tickets());
    const int fd = ::open(board.tickets().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    const auto bump = [&](std::string_view ticket, BumpSide side) {
        bump_write_generation(board.tickets(), ticket, side);
    };
    bump("PROJ-1", BumpSide::before);  // 1
    bump("PROJ-1", BumpSide::after);   // 2
    bump("PROJ-2", BumpSide::before);  // 3: a change still open
    bump("PROJ-3", BumpSide::before);  // 4
    bump("PROJ-1", BumpSide::before);  // 5
    bump("PROJ-3", BumpSide::after);   // 6
    bump("PROJ-1", BumpSide::after);   // 7
    const GenerationView view{fd};
    REQUIRE(view.generation()->counter == 7);

    const auto all = view.touched(0, 7);
    REQUIRE(all);
    CHECK(all->tickets == std::vector<std::string>{"PROJ-1", "PROJ-2", "PROJ-3"});
    CHECK(all->settled == 2);  // PROJ-2's change began at 3 and has not ended
    CHECK(view.settled_after_full_check(7) == 2);

    const auto first_two = view.touched(0, 2);
    REQUIRE(first_two);
    CHECK(first_two->tickets == std::vector<std::string>{"PROJ-1"});
    CHECK(first_two->settled == 2);

    const auto none = view.touched(7, 7);
    REQUIRE(none);
    CHECK(none->tickets.empty());
    CHECK(none->settled == 7);

    bump("PROJ-2", BumpSide::after);  // 8: PROJ-2's change ends
    const auto ended = view.touched(2, 8);
    REQUIRE(ended);
    CHECK(ended->settled == 8);
    CHECK(view.settled_after_full_check(8) == 8);

    SECTION("a bump that names no ticket (verify) means any log: the ring cannot tell") {
        bump("", BumpSide::after);
        CHECK_FALSE(view.touched(8, 9));
        CHECK(view.touched(0, 8));
    }
    SECTION("more bumps than the ring holds: it cannot tell") {
        for (std::uint64_t i = 0; i < touch_slot_count; ++i) bump("PROJ-4", BumpSide::after);
        const auto end = view.generation()->counter;
        CHECK_FALSE(view.touched(end - touch_slot_count - 1, end));
        CHECK(view.touched(end - touch_slot_count, end));
    }
    SECTION("a window not yet bumped to: it cannot tell") {
        CHECK_FALSE(view.touched(8, 9));
    }
    ::close(fd);
}

TEST_CASE("the boot id is read", "[generation]") {
    CHECK(boot_id().size() == 36);  // a UUID
}
