// The parsed board.yaml kept between `board` runs: it must give exactly what a fresh parse
// gives, and never outlive the text it was parsed from.

#include "cli/config_cache.hpp"

#include <board/write_generation.hpp>

#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <support/temp_dir.hpp>

namespace fs = std::filesystem;
using namespace board;
using namespace std::chrono_literals;

namespace {

void write(const fs::path& file, std::string_view text) {
    std::ofstream out{file, std::ios::binary | std::ios::trunc};
    out << text;
    REQUIRE(out.flush());
}

std::string read(const fs::path& file) {
    std::ifstream in{file, std::ios::binary};
    return {std::istreambuf_iterator<char>{in}, {}};
}

/// Every field away from its default, so a field the JSON forgot cannot compare equal.
BoardConfig everything_changed() {
    BoardConfig c;
    c.prefix = "ZED9";
    c.policy.auto_research = false;
    c.policy.auto_planning = true;
    c.policy.wip = {1, 2, 3, 4, 5, 6, 7};
    c.policy.research_gate = Gate::checkpoint;
    c.policy.planning_gate = Gate::none;
    c.policy.max_iterations = 4;
    c.policy.max_attempts = 5;
    c.policy.max_cost_usd = 0.1 + 0.2;  // not exactly representable in a short decimal
    c.policy.review_agent = false;
    c.policy.retry_backoff_ms = 1234;
    c.policy.retry_backoff_max_ms = 56789;
    c.daemon = {7, 11ms, 13ms, 17ms};
    c.default_command = {"codex", "exec", "--json", "\"quoted\" \\ and\nnewline"};
    c.default_timeout = 19ms;
    c.default_dialect = DialectKind::gemini;
    c.default_sandbox = SandboxMode::none;
    c.research = {{"r"}, DialectKind::codex, 23ms, 2, true, false, true, SandboxMode::landlock};
    c.planning = {
        {"p", "-x"}, DialectKind::generic, 29ms, 3, true, false, false, SandboxMode::none};
    c.implementing = {{"i"}, DialectKind::claude, 31ms, 4, false, false, true};
    c.review = {{"v"}, DialectKind::gemini, 37ms, 5, true, false, true, SandboxMode::none};
    c.notify = {{"notify-send", "board"}, 41ms, 9};
    return c;
}

}  // namespace

TEST_CASE("config_to_json carries every field of the config back", "[config-cache]") {
    const BoardConfig defaults;
    REQUIRE(cli::config_from_json(cli::config_to_json(defaults)) == defaults);

    const BoardConfig changed = everything_changed();
    REQUIRE_FALSE(changed == defaults);
    REQUIRE(cli::config_from_json(cli::config_to_json(changed)) == changed);

    const auto from_init = parse_board_config(default_board_yaml("WEB"));
    REQUIRE(from_init);
    REQUIRE(cli::config_from_json(cli::config_to_json(from_init.value())) == from_init.value());

    // The example board of the repository (tests run in their source folder).
    const auto example = load_board_config("../../board.yaml");
    REQUIRE(example);
    REQUIRE(cli::config_from_json(cli::config_to_json(example.value())) == example.value());
}

TEST_CASE("config_from_json refuses what it does not fully understand", "[config-cache]") {
    const std::string good = cli::config_to_json(everything_changed());
    REQUIRE(cli::config_from_json(good));
    CHECK_FALSE(cli::config_from_json(""));
    CHECK_FALSE(cli::config_from_json("[]"));
    CHECK_FALSE(cli::config_from_json(good.substr(0, good.size() - 1)));

    auto replaced = [&](std::string_view from, std::string_view to) {
        std::string text = good;
        const auto at = text.find(from);
        REQUIRE(at != std::string::npos);
        return text.replace(at, from.size(), to);
    };
    CHECK_FALSE(cli::config_from_json(replaced("\"prefix\":\"ZED9\"", "\"prefix\":\"zed\"")));
    CHECK_FALSE(cli::config_from_json(replaced("\"research_gate\":1", "\"research_gate\":9")));
    CHECK_FALSE(cli::config_from_json(replaced("\"max_steps\":2", "\"max_steps\":\"2\"")));
    CHECK_FALSE(cli::config_from_json(replaced("\"wip\":[1,2,3,4,5,6,7]", "\"wip\":[1,2]")));
    CHECK_FALSE(cli::config_from_json(replaced("\"max_parallel\":7", "\"max_parallel\":1e99")));
    CHECK_FALSE(cli::config_from_json(replaced("\"notify\":", "\"notified\":")));
}

TEST_CASE("load_board_config_cached reads board.yaml as it is now", "[config-cache]") {
    testing::TempDir board{"board-config-cache-"};
    fs::create_directory(board.path() / "tickets");
    const fs::path yaml = board.path() / "board.yaml";
    const fs::path cache = cli::config_cache_path(board.path());
    write(yaml, default_board_yaml("WEB"));

    SECTION("the first read keeps the parse; the next one gives the same config") {
        const auto fresh = load_board_config(yaml);
        REQUIRE(fresh);
        const auto first = cli::load_board_config_cached(board.path());
        REQUIRE(first);
        CHECK(first.value() == fresh.value());
        if (!boot_id().empty()) CHECK(fs::exists(cache));
        const auto second = cli::load_board_config_cached(board.path());
        REQUIRE(second);
        CHECK(second.value() == fresh.value());
    }

    SECTION("an edit of the same size, at once, is seen") {
        REQUIRE(cli::load_board_config_cached(board.path()));
        std::string text = read(yaml);
        const auto at = text.find("prefix: WEB");
        REQUIRE(at != std::string::npos);
        text.replace(at, 11, "prefix: WEX");
        write(yaml, text);
        const auto edited = cli::load_board_config_cached(board.path());
        REQUIRE(edited);
        CHECK(edited.value().prefix == "WEX");
    }

    SECTION("the cache is believed only for the text it quotes, in this boot") {
        const std::string text = read(yaml);
        BoardConfig other;
        other.prefix = "OTHER";
        const std::string json = cli::config_to_json(other);
        auto cache_for = [&](std::string_view boot, std::string_view quoted) {
            return "board-config-cache 3\n" + std::string{boot} + "\n" +
                   std::to_string(quoted.size()) + "\n" + std::string{quoted} + json + "\n";
        };
        const std::string boot = boot_id();
        if (boot.empty()) return;  // no boot id: the cache is never used at all

        // Written by this boot for this very text: believed (it is how the cache works).
        write(cache, cache_for(boot, text));
        CHECK(cli::load_board_config_cached(board.path()).value().prefix == "OTHER");
        // Another boot, or another machine: parsed afresh, and the cache replaced.
        write(cache, cache_for("00000000-0000-0000-0000-000000000000", text));
        CHECK(cli::load_board_config_cached(board.path()).value().prefix == "WEB");
        CHECK(read(cache).find("\"prefix\":\"WEB\"") != std::string::npos);
        // Another text (one byte shorter, or the same length but different): parsed afresh.
        write(cache, cache_for(boot, text.substr(0, text.size() - 1)));
        CHECK(cli::load_board_config_cached(board.path()).value().prefix == "WEB");
        std::string changed = text;
        changed.back() = changed.back() == ' ' ? '\t' : ' ';
        write(cache, cache_for(boot, changed));
        CHECK(cli::load_board_config_cached(board.path()).value().prefix == "WEB");
        // A cache cut short or garbled: parsed afresh.
        write(cache, cache_for(boot, text).substr(0, 40));
        CHECK(cli::load_board_config_cached(board.path()).value().prefix == "WEB");
        write(cache, "garbage");
        CHECK(cli::load_board_config_cached(board.path()).value().prefix == "WEB");
    }

    SECTION("a bad board.yaml is reported every time, never cached") {
        REQUIRE(cli::load_board_config_cached(board.path()));
        write(yaml, "prefix: WEB\ngates: { reserch: none }\n");
        for (int i = 0; i < 2; ++i) {
            const auto bad = cli::load_board_config_cached(board.path());
            REQUIRE_FALSE(bad);
            CHECK(bad.error() == load_board_config(yaml).error());
            CHECK(bad.error().line == 2);
        }
    }

    SECTION("a missing board.yaml is the same error as load_board_config's") {
        fs::remove(yaml);
        const auto missing = cli::load_board_config_cached(board.path());
        REQUIRE_FALSE(missing);
        CHECK(missing.error() == load_board_config(yaml).error());
    }

    SECTION("a board.yaml too big to keep a copy of is read whole, every time") {
        const std::string big = "# " + std::string(1200 * 1024, 'x') + "\nprefix: BIG\n";
        write(yaml, big);
        for (int i = 0; i < 2; ++i) {
            const auto read = cli::load_board_config_cached(board.path());
            REQUIRE(read);
            CHECK(read.value().prefix == "BIG");
        }
    }
    SECTION("a board without tickets/ yet is read, and nothing is written") {
        fs::remove_all(board.path() / "tickets");
        REQUIRE(cli::load_board_config_cached(board.path()).value().prefix == "WEB");
        CHECK_FALSE(fs::exists(board.path() / "tickets"));
    }
}
