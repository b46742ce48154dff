// The catalog's index (catalog.hpp) under real concurrency: processes append notes while this
// one loads the board again and again. A load that starts after a note was acknowledged must
// show that note: an index line is believed only while its log is provably unchanged, and
// this is where a gap in that rule (a change within a clock tick of a stat) would show.
#include "support/file_clock.hpp"
#include "support/temp_dir.hpp"

#include <board/catalog.hpp>
#include <board/event_log.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <filesystem>
#include <string>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;
using namespace board;

namespace {

constexpr int tickets = 8;

std::string id_of(int t) {
    return "PROJ-" + std::to_string(t + 1);
}

constexpr int writers = 2;
/// Loads that must overlap the writes: the writers go on past their first notes until the
/// reader has made this many, however fast the machine writes.
constexpr int loads_wanted = 20;

/// Shared by every process of the test: notes acknowledged so far per ticket, notes each
/// writer committed, and loads the reader has made.
struct Acknowledged {
    std::int64_t notes[tickets];
    std::int64_t written[writers];
    std::int64_t loads;
};

}  // namespace

TEST_CASE("a load never misses a note acknowledged before it started", "[catalog][fresh]") {
    const testing::TempDir board{"board-fresh-queries-", testing::memory_backed_root()};
    const fs::path tickets_dir = board.path() / "tickets";
    const Actor ana{ActorKind::human, "ana"};
    for (int t = 0; t < tickets; ++t) {
        fs::create_directories(tickets_dir / id_of(t));
        Created created;
        created.ticket = id_of(t);
        created.title = "ticket " + std::to_string(t);
        REQUIRE(std::holds_alternative<Committed>(
            transact(tickets_dir / id_of(t), ana, [&](const Ticket&) {
                return std::vector<Payload>{created};
            })));
    }
    REQUIRE(std::holds_alternative<CatalogLoad>(load_catalog(board.path())));  // the index

    void* shared = ::mmap(
        nullptr, sizeof(Acknowledged), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    REQUIRE(shared != MAP_FAILED);

    struct Unmap {
        void* at;

        ~Unmap() { ::munmap(at, sizeof(Acknowledged)); }
    } unmap{shared};  // after the writers are reaped (below)

    auto* acked = new (shared) Acknowledged{};
    const auto notes_acked = [&](int t) {
        return std::atomic_ref<std::int64_t>{acked->notes[t]}.load();
    };

    constexpr int notes_each = 200;  // at least
    constexpr int notes_at_most = notes_each * 100;
    std::vector<pid_t> children;
    for (int w = 0; w < writers; ++w) {
        const pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            int failures = 0;
            std::atomic_ref<std::int64_t> loads{acked->loads};
            std::atomic_ref<std::int64_t> written{acked->written[w]};
            for (int i = 0; i < notes_at_most && (i < notes_each || loads.load() < loads_wanted);
                 ++i) {
                const int t = (i * 3 + w) % tickets;
                const auto result = transact(tickets_dir / id_of(t), ana, [&](const Ticket&) {
                    return std::vector<Payload>{NoteAdded{"note " + std::to_string(i)}};
                });
                const auto* committed = std::get_if<Committed>(&result);
                if (!committed) {
                    ++failures;
                    continue;
                }
                written.fetch_add(1);
                // Acknowledged: record how many notes the ticket has at least.
                std::atomic_ref<std::int64_t> count{acked->notes[t]};
                const auto now = static_cast<std::int64_t>(committed->ticket->notes.size());
                for (auto seen = count.load();
                     seen < now && !count.compare_exchange_weak(seen, now);) {
                }
            }
            ::_exit(failures == 0 ? 0 : 1);
        }
        children.push_back(pid);
    }

    // However this loop ends (a failed REQUIRE too), the writers are told to stop and reaped
    // before the board's folder goes; each one's exit status says whether all its writes
    // committed.
    std::vector<int> statuses(children.size(), -1);

    struct StopWriters {
        Acknowledged* acked;
        std::vector<pid_t>& children;
        std::vector<int>& statuses;

        ~StopWriters() {
            std::atomic_ref<std::int64_t>{acked->loads}.store(loads_wanted);
            for (std::size_t c = 0; c < children.size(); ++c)
                if (statuses[c] == -1) ::waitpid(children[c], &statuses[c], 0);
        }
    } stop_writers{acked, children, statuses};

    int loads = 0;
    int stale = 0;
    bool writing = true;
    while (writing) {
        writing = false;
        for (std::size_t c = 0; c < children.size(); ++c)
            if (statuses[c] == -1 && ::waitpid(children[c], &statuses[c], WNOHANG) == 0) {
                statuses[c] = -1;
                writing = true;
            }
        std::int64_t before[tickets];
        for (int t = 0; t < tickets; ++t) before[t] = notes_acked(t);
        auto loaded = load_catalog(board.path());
        REQUIRE(std::holds_alternative<CatalogLoad>(loaded));
        const Catalog& catalog = std::get<CatalogLoad>(loaded).catalog;
        ++loads;
        std::atomic_ref<std::int64_t>{acked->loads}.store(loads);
        for (int t = 0; t < tickets; ++t) {
            const CatalogEntry* entry = catalog.find(id_of(t));
            REQUIRE(entry != nullptr);
            if (entry->notes < before[t]) {
                ++stale;
                UNSCOPED_INFO(id_of(t) << " showed " << entry->notes << " notes after " << before[t]
                                       << " were acknowledged");
            }
        }
    }
    CHECK(loads >= loads_wanted);
    CHECK(stale == 0);
    for (const int status : statuses) CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));

    // Once every writer is done, a load shows every note, and (the writes' clock tick past)
    // the next one trusts the index.
    testing::let_the_file_clock_tick();
    std::int64_t total = 0;
    auto final_load = load_catalog(board.path());
    REQUIRE(std::holds_alternative<CatalogLoad>(final_load));
    for (const auto& entry : std::get<CatalogLoad>(final_load).catalog.entries())
        total += entry.notes;
    std::int64_t written = 0;
    for (int w = 0; w < writers; ++w)
        written += std::atomic_ref<std::int64_t>{acked->written[w]}.load();
    CHECK(written >= writers * notes_each);
    CHECK(total == written);
    CHECK(std::get<CatalogLoad>(load_catalog(board.path())).rebuilt == 0);
}
