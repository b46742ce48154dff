#include "support/temp_dir.hpp"

#include <board/event_log.hpp>
#include <board/write_generation.hpp>

#include <catch2/catch.hpp>

#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
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
    // The ring after them: a writer preempted in the middle of its slot while 512 others
    // bumped may have left its slot holding its own, older bump (readers then check every
    // log), so the ring is read over a window this process alone wrote since.
    const int fd = ::open(board.tickets().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    const GenerationView view{fd};
    ::close(fd);
    const auto end = board.read()->counter;
    for (std::uint64_t i = 0; i < touch_slot_count / 2; ++i) {
        bump_write_generation(board.tickets(), "PROJ-9", BumpSide::before);
        bump_write_generation(board.tickets(), "PROJ-9", BumpSide::after);
    }
    const auto touched = view.touched(end, end + touch_slot_count);
    REQUIRE(touched);
    CHECK(touched->tickets == std::vector<std::string>{"PROJ-9"});
    CHECK(touched->settled == end + touch_slot_count);
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
    SECTION("a touch (a corrupt read) names its ticket but neither begins nor ends a change") {
        bump("PROJ-5", BumpSide::before);  // 9
        bump("PROJ-5", BumpSide::touch);   // 10
        const auto window = view.touched(8, 10);
        REQUIRE(window);
        CHECK(window->tickets == std::vector<std::string>{"PROJ-5"});
        CHECK(window->settled == 8);  // PROJ-5's change is still open
    }
    const fs::path file = board.tickets() / std::string{generation_file_name};
    const auto poke = [&](std::uint64_t number, std::size_t word, std::uint64_t value) {
        // Word `word` of bump `number`'s slot, as a writer stalled mid-slot leaves it.
        std::fstream ring{file, std::ios::in | std::ios::out | std::ios::binary};
        ring.seekp(
            static_cast<std::streamoff>(16 + ((number - 1) % touch_slot_count) * 64 + word * 8));
        ring.write(reinterpret_cast<const char*>(&value), sizeof value);
    };
    SECTION("a slot whose payload does not match its check word (two writers mixed): no") {
        // Bump 5's first payload word from another writer: a whole side and ticket id
        // (PROJ-9, `after`), but not the words the check was made over.
        const unsigned char other[8] = {2, 'P', 'R', 'O', 'J', '-', '9', 0};
        std::uint64_t word = 0;
        std::memcpy(&word, other, sizeof word);
        poke(5, 1, word);
        CHECK_FALSE(view.touched(4, 8));
        CHECK(view.touched(5, 8));
    }
    SECTION("a full check records nothing past a slot it cannot read: a first bump, maybe") {
        poke(1, 0, 0);  // bump 1 as its writer leaves it between its add and its slot
        CHECK(view.settled_after_full_check(8) == 0);  // every change it saw had ended
    }
    ::close(fd);
}

TEST_CASE("a generation file of the layout before the ring is replaced by the next reader",
          "[generation]") {
    const Board board;
    const fs::path file = board.tickets() / std::string{generation_file_name};
    {
        const std::uint64_t old_layout[2] = {42, 7};  // nonce, counter: 16 bytes
        std::ofstream out{file, std::ios::binary};
        out.write(reinterpret_cast<const char*>(old_layout), sizeof old_layout);
    }
    CHECK_FALSE(board.read());
    start_write_generation(board.tickets());
    const auto fresh = board.read();
    REQUIRE(fresh);
    CHECK(fresh->nonce != 42);
    CHECK(fresh->counter == 0);
    bump_write_generation(board.tickets(), "PROJ-1", BumpSide::after);
    CHECK(board.read()->counter == 1);
}

TEST_CASE("the boot id is read", "[generation]") {
    CHECK(boot_id().size() == 36);  // a UUID
}
