import ArgumentParser
import Foundation

/// `hostscope --generate-completion-script bash|zsh|fish`: the argument parser's script, and for bash a wrapper
/// that keeps `HOST:PATH` words whole.
///
/// bash splits words at `:` (it is in `COMP_WORDBREAKS`), so `web1:/var/lo` reaches a completion function as three
/// words, where zsh and fish give one. The wrapper joins such words again before it calls the parser's function, and
/// afterwards cuts each offer back to what bash replaces (what follows the last `:`), leaving no space after a
/// directory or a host that ends in `:`, so that completion can go on from there.
enum CompletionScript {
    /// The script for `arguments` when they ask for one (`--generate-completion-script SHELL` alone, or
    /// `=SHELL`), else `nil`.
    static func requested(by arguments: [String]) -> String? {
        let option = "--generate-completion-script"
        let shell: String
        if arguments.count == 2, arguments[0] == option {
            shell = arguments[1]
        } else if arguments.count == 1, arguments[0].hasPrefix(option + "=") {
            shell = String(arguments[0].dropFirst(option.count + 1))
        } else {
            return nil
        }
        guard let kind = CompletionShell(rawValue: shell) else { return nil }
        let script = Hostscope.completionScript(for: kind)
        switch kind {
        case .bash: return script + bashWholeWords
        case .zsh: return script.replacingOccurrences(of: zshDescribe, with: zshDescribeOpen)
        default: return script
        }
    }

    /// The zsh script's one call of `_describe`, which adds a space after every offer it completes.
    static let zshDescribe = #"    _describe -V '' non_empty_completions -- empty_completions -P $'\'\''"#
    /// The same, except for offers ending in `/` or `:` (a remote directory, a host): completion goes on after
    /// them, so no space is added.
    static let zshDescribeOpen = #"""
            local -a open_completions=("${(M)non_empty_completions[@]:#*(/|\:)}")
            local -a closed_completions=("${non_empty_completions[@]:#*(/|\:)}")
            _describe -V '' closed_completions -- open_completions -S '' -- empty_completions -P $'\'\''
        """#

    static let bashWholeWords = #"""

        # HOST:PATH arguments: bash splits words at ':' where zsh and fish do not. Hand _hostscope the words
        # whole, then give bash back only what it replaces: what follows the last ':' of the word.
        _hostscope_whole_words() {
            local line="${COMP_LINE}" word rest
            local -a whole=()
            local -i index current=0
            for index in "${!COMP_WORDS[@]}"; do
                word="${COMP_WORDS[index]}"
                rest="${line#"${line%%[![:blank:]]*}"}"
                if ((index > 0)) && [[ "${rest}" == "${line}" ]] && [[ "${word}" == :* || "${whole[-1]}" == *: ]]; then
                    whole[-1]+="${word}"
                else
                    whole+=("${word}")
                fi
                ((index == COMP_CWORD)) && current=$((${#whole[@]} - 1))
                line="${rest#"${word}"}"
            done
            local -a COMP_WORDS=("${whole[@]}")
            local -i COMP_CWORD=current
            local head="${whole[current]%"${2}"}"
            _hostscope "${1}" "${whole[current]}" "${whole[current - 1]}"
            local -i reply
            if [[ -n "${head}" ]]; then
                for reply in "${!COMPREPLY[@]}"; do
                    COMPREPLY[reply]="${COMPREPLY[reply]#"${head}"}"
                done
            fi
            # Remote names and hosts are no local files: bash's filename handling would escape the ':' and add
            # a '/' after names that happen to be local directories. Quote them here instead.
            local remote=false offer
            [[ "${whole[current]}" == *:* ]] && remote=true
            for offer in "${COMPREPLY[@]}"; do [[ "${offer}" == *: ]] && remote=true; done
            if "${remote}"; then
                compopt +o filenames
                for reply in "${!COMPREPLY[@]}"; do
                    printf -v "COMPREPLY[${reply}]" %q "${COMPREPLY[reply]}"
                done
            fi
            if ((${#COMPREPLY[@]} == 1)) && [[ "${COMPREPLY[0]}" == */ || "${COMPREPLY[0]}" == *: ]]; then
                compopt -o nospace
            fi
        }
        complete -o filenames -F _hostscope_whole_words hostscope

        """#
}
