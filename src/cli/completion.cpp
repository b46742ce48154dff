#include "cli/completion.hpp"

#include <board/event.hpp>
#include <board/ticket.hpp>

#include <fmt/format.h>

#include <utility>
#include <variant>
#include <vector>

namespace board::cli {
namespace {

/// What may be offered for a value. Anything not named here is free text: nothing is offered.
enum class Values {
    nothing,
    tickets,
    questions,
    statuses,
    earlier_statuses,  ///< where `move` may send a ticket back to
    awaiting,
    awaiting_or_none,  ///< `update --awaiting none` releases a ticket to the agent
    ticket_types,
    event_types,
    authors,
    directories,
    files,
    shells,
};

struct Flag {
    std::vector<std::string> spellings;  ///< `--status`, `-s`
    bool takes_value = false;
    Values values = Values::nothing;
    std::string help;
};

struct Positional {
    std::string name;
    Values values = Values::nothing;
    bool repeats = false;
};

struct Command {
    std::string name, help;
    std::vector<Flag> flags;
    std::vector<Positional> positionals;
};

/// An option's values, by its long name: the same name means the same kind of value in every
/// command, except `log --type`, which filters events rather than tickets.
Values option_values(std::string_view command, std::string_view name) {
    if (name == "board") return Values::directories;
    if (name == "awaiting" || name == "requires")
        return command == "update" ? Values::awaiting_or_none : Values::awaiting;
    if (name == "status") return Values::statuses;
    if (name == "type") return command == "log" ? Values::event_types : Values::ticket_types;
    if (name == "from") return Values::authors;
    if (name == "parent" || name == "blocked-by") return Values::tickets;
    return Values::nothing;
}

/// A positional argument's values, by the name its command gives it in --help.
Values positional_values(std::string_view name) {
    if (name == "ID" || name == "EPIC") return Values::tickets;
    if (name == "QID") return Values::questions;
    if (name == "STATUS") return Values::earlier_statuses;
    if (name == "SHELL") return Values::shells;
    if (name == "DIR") return Values::directories;
    if (name == "PATH") return Values::files;
    return Values::nothing;
}

std::vector<std::string> words_of(Values values) {
    std::vector<std::string> out;
    switch (values) {
        case Values::statuses:
        case Values::earlier_statuses:
            for (const Status s : all_statuses)
                if (values == Values::statuses || s < Status::review)
                    out.emplace_back(to_string(s));
            break;
        case Values::awaiting:
        case Values::awaiting_or_none:
            for (int a = 0; a <= static_cast<int>(Awaiting::checkpoint); ++a)
                out.emplace_back(to_string(static_cast<Awaiting>(a)));
            if (values == Values::awaiting_or_none) out.emplace_back("none");
            break;
        case Values::ticket_types:
            for (int t = 0; t <= static_cast<int>(TicketType::epic); ++t)
                out.emplace_back(to_string(static_cast<TicketType>(t)));
            break;
        case Values::event_types:
            [&]<std::size_t... I>(std::index_sequence<I...>) {
                (out.emplace_back(std::variant_alternative_t<I, Payload>::type), ...);
            }
            (std::make_index_sequence<std::variant_size_v<Payload>>{});
            break;
        case Values::authors:
            out = {"human", "agent"};
            break;
        case Values::shells:
            for (const auto shell : completion_shells) out.emplace_back(shell);
            break;
        default:
            break;
    }
    return out;
}

std::string joined(const std::vector<std::string>& words, std::string_view separator = " ") {
    std::string out;
    for (const auto& w : words) {
        if (!out.empty()) out += separator;
        out += w;
    }
    return out;
}

std::string summary_line(const std::string& text) {
    return text.substr(0, text.find('\n'));
}

std::vector<Flag> flags_of(std::string_view command, const CLI::App& app) {
    std::vector<Flag> out;
    for (const CLI::Option* option : app.get_options()) {
        if (!option->nonpositional()) continue;
        Flag flag;
        for (const auto& l : option->get_lnames()) flag.spellings.push_back("--" + l);
        for (const auto& s : option->get_snames()) flag.spellings.push_back("-" + s);
        flag.takes_value = option->get_expected_max() > 0;
        if (flag.takes_value && !option->get_lnames().empty())
            flag.values = option_values(command, option->get_lnames().front());
        flag.help = summary_line(option->get_description());
        out.push_back(std::move(flag));
    }
    return out;
}

std::vector<Command> commands_of(const CLI::App& app) {
    std::vector<Command> out;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
        Command command{sub->get_name(), summary_line(sub->get_description()), {}, {}};
        command.flags = flags_of(command.name, *sub);
        for (const CLI::Option* option : sub->get_options()) {
            if (option->nonpositional()) continue;
            const std::string name = option->get_name(true);
            command.positionals.push_back(
                {name, positional_values(name), option->get_items_expected_max() > 1});
        }
        out.push_back(std::move(command));
    }
    return out;
}

std::vector<std::string> valued_spellings(const std::vector<Flag>& flags) {
    std::vector<std::string> out;
    for (const auto& f : flags)
        if (f.takes_value) out.insert(out.end(), f.spellings.begin(), f.spellings.end());
    return out;
}

std::vector<std::string> all_spellings(const std::vector<Flag>& flags) {
    std::vector<std::string> out;
    for (const auto& f : flags) out.insert(out.end(), f.spellings.begin(), f.spellings.end());
    return out;
}

// The three scripts share one shape: find the command and count its arguments (skipping
// options and the values of those that take one), then offer by what the word is. Ids are the
// board's answer in JSON, cut to the id's shape (spec/storage.md), so nothing else that a
// board prints can pass for one.
constexpr std::string_view ticket_id_json = R"("id":"[A-Z][A-Z0-9]{0,15}-[0-9]{1,9}")";
constexpr std::string_view question_id_json = R"("id":"[A-Z][A-Z0-9]{0,15}-[0-9]{1,9}\.q[0-9]+")";

std::string bash_action(Values values) {
    switch (values) {
        case Values::tickets:
            return R"sh(_board_words "$(_board_ids tickets)")sh";
        case Values::questions:
            return R"sh(_board_words "$(_board_ids questions)")sh";
        case Values::directories:
            return R"sh(compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$cur")))sh";
        case Values::files:
            return R"sh(compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")))sh";
        case Values::nothing:
            return "COMPREPLY=()";
        default:
            return fmt::format(R"sh(_board_words "{}")sh", joined(words_of(values)));
    }
}

std::string bash(const std::vector<Flag>& top, const std::vector<Command>& commands) {
    std::string names, valued, value_cases, flag_cases, positional_cases;
    const auto add_values = [&](const std::string& command, const std::vector<Flag>& flags) {
        for (const auto& f : flags) {
            if (!f.takes_value) continue;
            std::string pattern;
            for (const auto& s : f.spellings)
                pattern += (pattern.empty() ? "" : "|") + fmt::format("\"{}:{}\"", command, s);
            value_cases += fmt::format("            {}) {} ;;\n", pattern, bash_action(f.values));
        }
    };
    add_values("", top);
    for (const auto& c : commands) {
        names += (names.empty() ? "" : " ") + c.name;
        valued += fmt::format(
            "                {}) valued+=\" {}\" ;;\n", c.name, joined(valued_spellings(c.flags)));
        add_values(c.name, c.flags);
        flag_cases +=
            fmt::format("        {}) opts=\"{}\" ;;\n", c.name, joined(all_spellings(c.flags)));
        for (std::size_t i = 0; i < c.positionals.size(); ++i) {
            const auto& p = c.positionals[i];
            const std::string pattern = p.repeats ? fmt::format("\"{} \"*", c.name)
                                                  : fmt::format("\"{} {}\"", c.name, i + 1);
            positional_cases += fmt::format(
                "            {}) {} ;;  # {}\n", pattern, bash_action(p.values), p.name);
        }
    }
    return fmt::format(
        R"sh(# bash completion for board (generated by `board completion bash`)
# Install: board completion bash > ~/.local/share/bash-completion/completions/board

# Ticket ($1 = tickets) or pending question ids, from the board the line names with --board,
# else the one board finds from here.
_board_ids() {{
    local i exe board=()
    exe=$(command -v -- "${{COMP_WORDS[0]}}") || exe=board
    for ((i = 1; i + 1 < COMP_CWORD; i++)); do
        [[ ${{COMP_WORDS[i]}} == --board ]] && board=(--board "${{COMP_WORDS[i+1]}}")
    done
    case $1 in
        tickets) "$exe" "${{board[@]}}" list --all --json 2>/dev/null |
                     grep -oE '{}' | cut -d'"' -f4 ;;
        questions) "$exe" "${{board[@]}}" questions --pending --json 2>/dev/null |
                     grep -oE '{}' | cut -d'"' -f4 ;;
    esac
}}

# Offers the words in $1 for the word being completed, or for its last comma-separated part.
_board_words() {{
    local prefix=""
    [[ $cur == *,* ]] && prefix="${{cur%,*}},"
    COMPREPLY=($(compgen -P "$prefix" -W "$1" -- "${{cur##*,}}"))
}}

_board() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    local cmd="" n=0 i word opts="" valued=" {} "
    for ((i = 1; i < COMP_CWORD; i++)); do
        word="${{COMP_WORDS[i]}}"
        if [[ $word == -* ]]; then
            [[ $valued == *" $word "* ]] && ((i++))
        elif [[ -z $cmd ]]; then
            cmd=$word
            case $cmd in
{}            esac
            valued+=" "
        else
            ((n++))
        fi
    done
    if [[ $COMP_CWORD -gt 1 && $prev == -* && $valued == *" $prev "* ]]; then
        case "$cmd:$prev" in
{}            *) COMPREPLY=() ;;
        esac
        return
    fi
    if [[ $cur == -* ]]; then
        case $cmd in
{}            "") opts="{}" ;;
        esac
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    elif [[ -z $cmd ]]; then
        COMPREPLY=($(compgen -W "{}" -- "$cur"))
    else
        case "$cmd $((n + 1))" in
{}            *) COMPREPLY=() ;;
        esac
    fi
}}
complete -F _board board
)sh",
        ticket_id_json,
        question_id_json,
        joined(valued_spellings(top)),
        valued,
        value_cases,
        flag_cases,
        joined(all_spellings(top)),
        names,
        positional_cases);
}

/// Text inside a single-quoted zsh `_arguments` spec's [help].
std::string zsh_help(std::string_view text) {
    std::string out;
    for (const char c : text) {
        if (c == '\'')
            out += R"('\'')";
        else if (c == '[' || c == ']' || c == ':' || c == '\\')
            out += std::string{"\\"} + c;
        else
            out += c;
    }
    return out;
}

std::string zsh_action(Values values) {
    switch (values) {
        case Values::tickets:
            return "_board_ids tickets";
        case Values::questions:
            return "_board_ids questions";
        case Values::directories:
            return "_files -/";
        case Values::files:
            return "_files";
        case Values::nothing:
            return " ";
        case Values::statuses:
        case Values::awaiting:
        case Values::awaiting_or_none:
        case Values::event_types:
            return "_values -s , value " + joined(words_of(values));
        default:
            return "(" + joined(words_of(values)) + ")";
    }
}

std::string zsh_flag_specs(const std::vector<Flag>& flags, std::string_view indent) {
    std::string out;
    for (const auto& f : flags)
        for (const auto& s : f.spellings) {
            std::string spec = s + "[" + zsh_help(f.help) + "]";
            if (f.takes_value)
                spec += ":" + s.substr(s.find_first_not_of('-')) + ":" + zsh_action(f.values);
            out += fmt::format(" \\\n{}'{}'", indent, spec);
        }
    return out;
}

std::string zsh(const std::vector<Flag>& top, const std::vector<Command>& commands) {
    std::string described, cases;
    for (const auto& c : commands) {
        described += fmt::format("        '{}:{}'\n", c.name, zsh_help(c.help));
        std::string specs = zsh_flag_specs(c.flags, "                ");
        for (std::size_t i = 0; i < c.positionals.size(); ++i) {
            const auto& p = c.positionals[i];
            specs += fmt::format(" \\\n                '{}:{}:{}'",
                                 p.repeats ? std::string{"*"} : std::to_string(i + 1),
                                 zsh_help(p.name),
                                 zsh_action(p.values));
        }
        cases += fmt::format("            {}) _arguments{} ;;\n", c.name, specs);
    }
    return fmt::format(
        R"sh(#compdef board
# zsh completion for board (generated by `board completion zsh`)
# Install: board completion zsh > ~/.zfunc/_board, with fpath+=(~/.zfunc) before compinit

# Ticket (last argument: tickets) or pending question ids, from the board the line names with
# --board, else the one board finds from here. _arguments puts compadd options first.
_board_ids() {{
    local -a board ids
    local i exe=${{_board_line[1]}} kind=${{@[-1]}}
    (( $+commands[$exe] )) || [[ -x $exe ]] || exe=board
    for ((i = 2; i < $#_board_line; i++)); do
        [[ ${{_board_line[i]}} == --board ]] && board=(--board ${{_board_line[i+1]}})
    done
    case $kind in
        tickets) ids=(${{(f)"$($exe $board list --all --json 2>/dev/null |
                      grep -oE '{}' | cut -d'"' -f4)"}})
                 _describe -t tickets 'ticket id' ids "${{(@)@[1,-2]}}" ;;
        questions) ids=(${{(f)"$($exe $board questions --pending --json 2>/dev/null |
                        grep -oE '{}' | cut -d'"' -f4)"}})
                   _describe -t questions 'question id' ids "${{(@)@[1,-2]}}" ;;
    esac
}}

_board() {{
    local -a _board_line=("${{words[@]}}")
    local curcontext="$curcontext" state line
    _arguments -C -A '-*'{} \
        '1: :->command' \
        '*:: :->args' && return
    case $state in
        command)
            local -a commands=(
{}            )
            _describe -t commands 'board command' commands ;;
        args)
            case ${{words[1]}} in
{}            esac ;;
    esac
}}

_board "$@"
)sh",
        ticket_id_json,
        question_id_json,
        zsh_flag_specs(top, "        "),
        described,
        cases);
}

/// Text inside a single-quoted fish string.
std::string fish_quoted(std::string_view text) {
    std::string out = "'";
    for (const char c : text) {
        if (c == '\'' || c == '\\') out += '\\';
        out += c;
    }
    return out + "'";
}

std::string fish_values(Values values) {
    switch (values) {
        case Values::tickets:
            return " -a '(__board_ids tickets)'";
        case Values::questions:
            return " -a '(__board_ids questions)'";
        case Values::directories:
            return " -a '(__fish_complete_directories (commandline -ct))'";
        case Values::files:
            return " -F";
        case Values::nothing:
            return "";
        default:
            return " -a " + fish_quoted(joined(words_of(values)));
    }
}

std::string fish_flags(std::string_view command, const std::vector<Flag>& flags) {
    std::string out;
    for (const auto& f : flags) {
        std::string spelled;
        for (const auto& s : f.spellings)
            spelled += s.starts_with("--") ? " -l " + s.substr(2) : " -s " + s.substr(1);
        out += fmt::format("complete -c board -n '__board_is {}'{}{}{} -d {}\n",
                           command,
                           spelled,
                           f.takes_value ? " -x" : "",
                           f.takes_value ? fish_values(f.values) : "",
                           fish_quoted(f.help));
    }
    return out;
}

std::string fish(const std::vector<Flag>& top, const std::vector<Command>& commands) {
    std::string valued, lines = fish_flags("-", top);
    for (const auto& c : commands) {
        valued += fmt::format(
            "        case {}\n            echo {}\n", c.name, joined(valued_spellings(c.flags)));
        lines += fmt::format(
            "complete -c board -n '__board_is -' -a {} -d {}\n", c.name, fish_quoted(c.help));
        lines += fish_flags(c.name, c.flags);
        for (std::size_t i = 0; i < c.positionals.size(); ++i) {
            const auto& p = c.positionals[i];
            if (p.values == Values::nothing) continue;
            lines += fmt::format("complete -c board -n '__board_arg {} {}{}'{} -d {}\n",
                                 c.name,
                                 i + 1,
                                 p.repeats ? "+" : "",
                                 fish_values(p.values),
                                 fish_quoted(p.name));
        }
    }
    return fmt::format(
        R"sh(# fish completion for board (generated by `board completion fish`)
# Install: board completion fish > ~/.config/fish/completions/board.fish

# The options of a command that take a value, so their values are not counted as arguments.
function __board_valued
    switch $argv[1]
{}    end
end

# The command on the line ("-" before there is one) and how many arguments it has before
# the word being completed.
function __board_state
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l command -
    set -l count 0
    set -l skip 0
    set -l valued {}
    for token in $tokens
        if test $skip -eq 1
            set skip 0
        else if string match -q -- '-*' $token
            contains -- $token $valued; and set skip 1
        else if test $command = -
            set command $token
            set valued $valued (string split ' ' -- (__board_valued $token))
        else
            set count (math $count + 1)
        end
    end
    echo $command
    echo $count
end

# True when the line's command is $argv[1] ("-": none yet).
function __board_is
    set -l state (__board_state)
    test "$state[1]" = $argv[1]
end

# True when the word being completed is argument $argv[2] of command $argv[1] ("N+": N or
# any after it).
function __board_arg
    set -l state (__board_state)
    test "$state[1]" = $argv[1]; or return 1
    set -l at (math $state[2] + 1)
    set -l want (string trim -r -c + -- $argv[2])
    if string match -q -- '*+' $argv[2]
        test $at -ge $want
    else
        test $at -eq $want
    end
end

# Ticket ($argv[1] = tickets) or pending question ids, from the board the line names with
# --board, else the one board finds from here.
function __board_ids
    set -l tokens (commandline -opc)
    set -l exe $tokens[1]
    command -q -- $exe; or set exe board
    set -l board
    for i in (seq 2 (math (count $tokens) - 1))
        test "$tokens[$i]" = --board; and set board --board $tokens[(math $i + 1)]
    end
    switch $argv[1]
        case tickets
            $exe $board list --all --json 2>/dev/null | string match -ra -- '{}' |
                string replace -r '^"id":"(.*)"$' '$1'
        case questions
            $exe $board questions --pending --json 2>/dev/null | string match -ra -- '{}' |
                string replace -r '^"id":"(.*)"$' '$1'
    end
end

complete -c board -f
{})sh",
        valued,
        joined(valued_spellings(top)),
        ticket_id_json,
        question_id_json,
        lines);
}

}  // namespace

std::string completion_script(const CLI::App& app, std::string_view shell) {
    const auto top = flags_of("", app);
    const auto commands = commands_of(app);
    if (shell == "zsh") return zsh(top, commands);
    if (shell == "fish") return fish(top, commands);
    return bash(top, commands);
}

}  // namespace board::cli
