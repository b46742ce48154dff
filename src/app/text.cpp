// The small rules about text every front end applies the same way: titles, names, lists.

#include <board/app.hpp>
#include <board/codec.hpp>

#include <algorithm>

namespace board::app {
namespace {

template <class Enum>
std::optional<std::vector<Enum>> parse_list(std::string_view text) {
    std::vector<Enum> out;
    for (const auto& name : split_list(text)) {
        const auto value = parse<Enum>(name);
        if (!value) return std::nullopt;
        out.push_back(*value);
    }
    return out;
}

}  // namespace

int exit_code_of(Refusal::Kind kind) {
    switch (kind) {
        case Refusal::Kind::invalid:
            return 2;
        case Refusal::Kind::not_found:
        case Refusal::Kind::refused:
        case Refusal::Kind::conflict:
            return 1;
        case Refusal::Kind::storage:
            break;
    }
    return 3;
}

bool is_blank(std::string_view text) {
    return text.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

std::optional<std::string> title_error(std::string_view title) {
    if (is_blank(title)) return "the title is empty";
    const bool one_line = std::none_of(title.begin(), title.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
    });
    if (!one_line) return "a title is one line, without control characters";
    return std::nullopt;
}

bool is_valid_person_name(std::string_view name) {
    // `--as agent:review` would sign `human:agent:review`: human, but read at a glance as not.
    return name.find(':') == std::string_view::npos &&
           is_valid_actor(Actor{ActorKind::human, std::string{name}});
}

std::vector<std::string> split_list(std::string_view text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start < text.size()) {
        const auto comma = std::min(text.find(',', start), text.size());
        std::string_view item = text.substr(start, comma - start);
        const auto first = item.find_first_not_of(" \t");
        if (first != std::string_view::npos) {
            item = item.substr(first, item.find_last_not_of(" \t") - first + 1);
            out.emplace_back(item);
        }
        start = comma + 1;
    }
    return out;
}

std::optional<std::vector<Status>> parse_status_list(std::string_view text) {
    return parse_list<Status>(text);
}

std::optional<std::vector<Awaiting>> parse_awaiting_list(std::string_view text) {
    return parse_list<Awaiting>(text);
}

}  // namespace board::app
