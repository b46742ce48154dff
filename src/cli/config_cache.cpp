#include "cli/config_cache.hpp"

#include <board/artifact.hpp>
#include <board/write_generation.hpp>

#include <boost/json.hpp>
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <sys/stat.h>
#include <unistd.h>

namespace board::cli {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

// The cache's first line. Bump it whenever BoardConfig or the JSON below changes shape: an
// old cache then simply misses.
constexpr std::string_view cache_magic = "board-config-cache 3\n";
constexpr std::size_t max_file_size = 1 << 20;  // board.yaml is a few KB; anything this big is
                                                // not ours to keep a copy of

/// The whole of a file, or nullopt with `error` set (errno) when it cannot be read, or
/// (EFBIG) when it holds more than `limit` bytes.
std::optional<std::string> read_file(const fs::path& file,
                                     int& error,
                                     std::size_t limit = std::string::npos) {
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        error = errno;
        return std::nullopt;
    }
    std::string text;

    struct stat info {};

    if (::fstat(fd, &info) == 0 && info.st_size > 0)
        text.reserve(static_cast<std::size_t>(info.st_size));
    char chunk[16384];
    for (;;) {
        const ssize_t got = ::read(fd, chunk, sizeof chunk);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            error = errno;
            ::close(fd);
            return std::nullopt;
        }
        if (got == 0) break;
        text.append(chunk, static_cast<std::size_t>(got));
        if (text.size() > limit) {
            error = EFBIG;
            ::close(fd);
            return std::nullopt;
        }
    }
    ::close(fd);
    return text;
}

json::array strings_json(const std::vector<std::string>& strings) {
    json::array out;
    for (const auto& s : strings) out.emplace_back(s);
    return out;
}

json::object agent_json(const AgentConfig& agent) {
    return {{"command", strings_json(agent.command)},
            {"timeout_ms", agent.timeout.count()},
            {"max_steps", agent.max_steps},
            {"worktree", agent.worktree},
            {"enabled", agent.enabled},
            {"resume", agent.resume},
            {"dialect", to_string(agent.dialect)},
            {"sandbox", static_cast<int>(agent.sandbox)}};
}

// Readers: each throws (boost::system::system_error, std::out_of_range) on a missing key or a
// wrong type; config_from_json turns any of that into "not understood".

std::vector<std::string> strings_of(const json::value& value) {
    std::vector<std::string> out;
    for (const auto& s : value.as_array()) out.emplace_back(s.as_string());
    return out;
}

int int_of(const json::value& value) {
    const std::int64_t n = value.as_int64();
    if (n < std::numeric_limits<int>::min() || n > std::numeric_limits<int>::max())
        throw std::out_of_range("int");
    return static_cast<int>(n);
}

std::chrono::milliseconds millis_of(const json::value& value) {
    return std::chrono::milliseconds{value.as_int64()};
}

Gate gate_of(const json::value& value) {
    const std::int64_t n = value.as_int64();
    if (n != static_cast<int>(Gate::none) && n != static_cast<int>(Gate::checkpoint) &&
        n != static_cast<int>(Gate::approval))
        throw std::out_of_range("gate");
    return static_cast<Gate>(n);
}

SandboxMode sandbox_of(const json::value& value) {
    const std::int64_t n = value.as_int64();
    if (n != static_cast<int>(SandboxMode::automatic) &&
        n != static_cast<int>(SandboxMode::landlock) && n != static_cast<int>(SandboxMode::none))
        throw std::out_of_range("sandbox");
    return static_cast<SandboxMode>(n);
}

AgentConfig agent_of(const json::value& value) {
    const json::object& o = value.as_object();
    AgentConfig agent;
    agent.command = strings_of(o.at("command"));
    agent.timeout = millis_of(o.at("timeout_ms"));
    agent.max_steps = int_of(o.at("max_steps"));
    agent.worktree = o.at("worktree").as_bool();
    agent.enabled = o.at("enabled").as_bool();
    agent.resume = o.at("resume").as_bool();
    const auto dialect = parse_dialect(o.at("dialect").as_string());
    if (!dialect) throw std::out_of_range("dialect");
    agent.dialect = *dialect;
    agent.sandbox = sandbox_of(o.at("sandbox"));
    return agent;
}

/// The cache's text: magic, boot id, the byte count of board.yaml, board.yaml itself, JSON.
std::string cache_text(std::string_view boot, std::string_view yaml, const BoardConfig& config) {
    return fmt::format(
        "{}{}\n{}\n{}{}\n", cache_magic, boot, yaml.size(), yaml, config_to_json(config));
}

/// The config the cache holds for exactly `yaml` in this boot, or nullopt.
std::optional<BoardConfig> cached_config(std::string_view cache,
                                         std::string_view boot,
                                         std::string_view yaml) {
    if (!cache.starts_with(cache_magic)) return std::nullopt;
    cache.remove_prefix(cache_magic.size());
    const auto boot_end = cache.find('\n');
    if (boot_end == std::string_view::npos || cache.substr(0, boot_end) != boot)
        return std::nullopt;
    cache.remove_prefix(boot_end + 1);
    const auto size_end = cache.find('\n');
    if (size_end == std::string_view::npos ||
        cache.substr(0, size_end) != std::to_string(yaml.size()))
        return std::nullopt;
    cache.remove_prefix(size_end + 1);
    if (cache.size() < yaml.size() || cache.substr(0, yaml.size()) != yaml) return std::nullopt;
    cache.remove_prefix(yaml.size());
    return config_from_json(cache);
}

}  // namespace

fs::path config_cache_path(const fs::path& board) {
    return board / "tickets" / ".config-cache";
}

std::string config_to_json(const BoardConfig& config) {
    const Policy& p = config.policy;
    json::array wip;
    for (const int limit : p.wip) wip.emplace_back(limit);
    const json::object policy{{"auto_research", p.auto_research},
                              {"auto_planning", p.auto_planning},
                              {"wip", std::move(wip)},
                              {"research_gate", static_cast<int>(p.research_gate)},
                              {"planning_gate", static_cast<int>(p.planning_gate)},
                              {"max_iterations", p.max_iterations},
                              {"max_attempts", p.max_attempts},
                              {"max_cost_usd", p.max_cost_usd},
                              {"review_agent", p.review_agent},
                              {"retry_backoff_ms", p.retry_backoff_ms},
                              {"retry_backoff_max_ms", p.retry_backoff_max_ms}};
    const json::object daemon{{"max_parallel", config.daemon.max_parallel},
                              {"poll_ms", config.daemon.poll.count()},
                              {"debounce_ms", config.daemon.debounce.count()},
                              {"grace_ms", config.daemon.grace.count()}};
    const json::object notify{{"command", strings_json(config.notify.command)},
                              {"timeout_ms", config.notify.timeout.count()},
                              {"max_parallel", config.notify.max_parallel}};
    const json::object whole{
        {"prefix", config.prefix},
        {"policy", policy},
        {"daemon", daemon},
        {"default_command", strings_json(config.default_command)},
        {"default_timeout_ms", config.default_timeout.count()},
        {"default_dialect", config.default_dialect ? to_string(*config.default_dialect) : ""},
        {"default_sandbox", static_cast<int>(config.default_sandbox)},
        {"research", agent_json(config.research)},
        {"planning", agent_json(config.planning)},
        {"implementing", agent_json(config.implementing)},
        {"review", agent_json(config.review)},
        {"notify", notify}};
    return json::serialize(whole);
}

std::optional<BoardConfig> config_from_json(std::string_view text) {
    try {
        json::error_code ec;
        const json::value parsed = json::parse(text, ec);
        if (ec) return std::nullopt;
        const json::object& o = parsed.as_object();
        BoardConfig config;
        config.prefix = o.at("prefix").as_string();
        if (!is_valid_prefix(config.prefix)) return std::nullopt;

        const json::object& p = o.at("policy").as_object();
        Policy& policy = config.policy;
        policy.auto_research = p.at("auto_research").as_bool();
        policy.auto_planning = p.at("auto_planning").as_bool();
        const json::array& wip = p.at("wip").as_array();
        if (wip.size() != policy.wip.size()) return std::nullopt;
        for (std::size_t i = 0; i < wip.size(); ++i) policy.wip[i] = int_of(wip[i]);
        policy.research_gate = gate_of(p.at("research_gate"));
        policy.planning_gate = gate_of(p.at("planning_gate"));
        policy.max_iterations = int_of(p.at("max_iterations"));
        policy.max_attempts = int_of(p.at("max_attempts"));
        policy.max_cost_usd = p.at("max_cost_usd").to_number<double>();
        policy.review_agent = p.at("review_agent").as_bool();
        policy.retry_backoff_ms = p.at("retry_backoff_ms").as_int64();
        policy.retry_backoff_max_ms = p.at("retry_backoff_max_ms").as_int64();

        const json::object& d = o.at("daemon").as_object();
        config.daemon.max_parallel = int_of(d.at("max_parallel"));
        config.daemon.poll = millis_of(d.at("poll_ms"));
        config.daemon.debounce = millis_of(d.at("debounce_ms"));
        config.daemon.grace = millis_of(d.at("grace_ms"));

        config.default_command = strings_of(o.at("default_command"));
        config.default_timeout = millis_of(o.at("default_timeout_ms"));
        if (const auto& named = o.at("default_dialect").as_string(); !named.empty()) {
            config.default_dialect = parse_dialect(named);
            if (!config.default_dialect) return std::nullopt;
        }
        config.default_sandbox = sandbox_of(o.at("default_sandbox"));
        config.research = agent_of(o.at("research"));
        config.planning = agent_of(o.at("planning"));
        config.implementing = agent_of(o.at("implementing"));
        config.review = agent_of(o.at("review"));

        const json::object& n = o.at("notify").as_object();
        config.notify.command = strings_of(n.at("command"));
        config.notify.timeout = millis_of(n.at("timeout_ms"));
        config.notify.max_parallel = int_of(n.at("max_parallel"));
        return config;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

ConfigResult load_board_config_cached(const fs::path& board) {
    const fs::path file = board / "board.yaml";
    int error = 0;
    const auto yaml = read_file(file, error);
    if (!yaml) {
        if (error == ENOENT) return ConfigError{0, 0, fmt::format("cannot open {}", file.string())};
        return ConfigError{
            0, 0, fmt::format("cannot read {}: {}", file.string(), std::strerror(error))};
    }
    const std::string boot = boot_id();
    const fs::path cache_file = config_cache_path(board);
    if (!boot.empty() && yaml->size() <= max_file_size) {
        int cache_error = 0;
        // The cache quotes board.yaml, so it is a little bigger than it.
        if (const auto cache = read_file(cache_file, cache_error, 2 * max_file_size))
            if (auto config = cached_config(*cache, boot, *yaml)) return std::move(*config);
    }
    ConfigResult parsed = parse_board_config(*yaml);
    // Only a good parse is kept: a bad board.yaml is parsed (and reported) every time.
    std::error_code ec;
    if (parsed && !boot.empty() && yaml->size() <= max_file_size &&
        fs::is_directory(board / "tickets", ec))
        (void)write_file_atomically(
            cache_file, cache_text(boot, *yaml, parsed.value()), Durability::unsynced);
    return parsed;
}

}  // namespace board::cli
