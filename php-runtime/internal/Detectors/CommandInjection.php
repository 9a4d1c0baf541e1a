<?php declare(strict_types=1);

namespace PhpFuzz\Detectors;

use PhpFuzz\Detectors;

/**
 * `command-injection`: a word of the input's choosing stands as a command
 * of the shell: after `;`, `|`, `&&`, a newline, inside `$(…)` or
 * backticks, or first on the line. A quoted argument is no command, so
 * `escapeshellarg()` keeps the canary harmless. For mail(), whose fifth
 * argument PHP escapes with escapeshellcmd() itself, an extra option the
 * input added (a word `-php-fuzz-cmd…`) is the injection.
 *
 * @internal php-fuzz's harness, not an API
 */
final class CommandInjection
{
    /** A shell command line (exec, system, popen, backticks…). */
    public static function shell(string $sink, string $command): void
    {
        if (!Detectors::on('command-injection')) {
            return;
        }
        if (\stripos($command, Detectors::COMMAND) === false) {
            self::guide($command);
            return;
        }
        foreach ((new ShellWords($command))->commands() as $word) {
            if (self::isCanary($word)) {
                Detectors::report('command-injection', "$sink() would run " . Detectors::quote(Detectors::COMMAND)
                    . ' from the input as a command of ' . Detectors::quote($command));
            }
        }
    }

    /** A program and its arguments, with no shell (proc_open's array, pcntl_exec). */
    public static function program(string $sink, string $program): void
    {
        if (Detectors::on('command-injection') && self::isCanary($program)) {
            Detectors::report('command-injection', "$sink() would run the program " . Detectors::quote($program) . ' from the input');
        }
    }

    /** mail()'s additional parameters, which PHP passes through escapeshellcmd(). */
    public static function mailParameters(string $parameters): void
    {
        if (!Detectors::on('command-injection') || \stripos($parameters, Detectors::COMMAND) === false) {
            return;
        }
        $line = \escapeshellcmd($parameters);
        foreach ((new ShellWords($line))->words() as $word) {
            if (\strncasecmp($word, '-' . Detectors::COMMAND, \strlen(Detectors::COMMAND) + 1) === 0) {
                Detectors::report('command-injection', 'mail() would pass the extra option ' . Detectors::quote($word)
                    . ' from the input to sendmail, in ' . Detectors::quote($parameters));
            }
        }
        self::shell('mail', $line);
    }

    private static function isCanary(string $word): bool
    {
        $name = \basename($word);
        return \strcasecmp($name, Detectors::COMMAND) === 0;
    }

    /** Steers the words of a command toward a command of their own. */
    private static function guide(string $command): void
    {
        if (!\PhpFuzz\CmpLog::$enabled) {
            return;
        }
        $n = 0;
        foreach ((new ShellWords($command))->words() as $word) {
            if (\strlen($word) < 2 || ++$n > 8) {
                continue;
            }
            Detectors::guide($word, ';' . Detectors::COMMAND . ';');
            Detectors::guide($word, '";' . Detectors::COMMAND . ';"');
        }
    }
}

/**
 * The words of a POSIX shell command line, and which of them stand where
 * the shell looks for a command. Quotes and backslashes are removed as the
 * shell removes them; `$(…)`, backticks and `(…)` subshells are command
 * lists of their own; `NAME=value` before a command and redirections are
 * not commands.
 *
 * @internal php-fuzz's harness, not an API
 */
final class ShellWords
{
    const KEYWORDS = ['if', 'then', 'else', 'elif', 'fi', 'do', 'done', 'while', 'until', 'for', 'case', 'esac', '!', '{', '}', 'time', 'exec', 'command', 'nohup', 'env', 'sudo', 'xargs'];

    /** @var string */
    private $s;
    /** @var int */
    private $i = 0;
    /** @var int */
    private $n;
    /** @var list<string> */
    private $all = [];
    /** @var list<string> */
    private $commands = [];

    public function __construct(string $line)
    {
        $this->s = $line;
        $this->n = \strlen($line);
        $this->list(null, 0);
    }

    /** @return list<string> the words in command position */
    public function commands(): array
    {
        return $this->commands;
    }

    /** @return list<string> every word */
    public function words(): array
    {
        return $this->all;
    }

    /** A command list, up to $end (`)` or a backtick) or the end of the line. */
    private function list(?string $end, int $depth): void
    {
        $commandNext = true;
        $redirect = false;
        while ($this->i < $this->n) {
            $c = $this->s[$this->i];
            if ($c === ' ' || $c === "\t") {
                $this->i++;
                continue;
            }
            if ($end !== null && $c === $end) {
                $this->i++;
                return;
            }
            if ($c === '#') {
                // A word that starts with # starts a comment.
                while ($this->i < $this->n && $this->s[$this->i] !== "\n") {
                    $this->i++;
                }
                continue;
            }
            if (\strpos(";&|\n", $c) !== false) {
                $this->i++;
                $commandNext = true;
                continue;
            }
            if ($c === '(') {
                $this->i++;
                if ($depth < 16) {
                    $this->list(')', $depth + 1);
                }
                continue;
            }
            if ($c === ')') {
                $this->i++;
                continue;
            }
            if ($c === '<' || $c === '>') {
                while ($this->i < $this->n && \strpos('<>&|', $this->s[$this->i]) !== false) {
                    $this->i++;
                }
                $redirect = true;
                continue;
            }
            $word = $this->word($depth);
            $this->all[] = $word;
            if ($redirect) {
                $redirect = false;
                continue;
            }
            if ($commandNext && \preg_match('/^[A-Za-z_][A-Za-z0-9_]*=/', $word) !== 1) {
                $this->commands[] = $word;
                $commandNext = \in_array($word, self::KEYWORDS, true);
            }
        }
    }

    /** One word, quotes removed; substitutions inside it are parsed as lists. */
    private function word(int $depth): string
    {
        $word = '';
        while ($this->i < $this->n) {
            $c = $this->s[$this->i];
            if (\strpos(" \t;&|\n()<>", $c) !== false) {
                break;
            }
            $this->i++;
            if ($c === '\\') {
                $word .= $this->s[$this->i++] ?? '';
            } elseif ($c === "'") {
                $close = \strpos($this->s, "'", $this->i);
                $close = $close === false ? $this->n : $close;
                $word .= \substr($this->s, $this->i, $close - $this->i);
                $this->i = $close + 1;
            } elseif ($c === '"') {
                $word .= $this->doubleQuoted($depth);
            } elseif (!$this->substitution($c, $depth)) {
                $word .= $c;
            }
        }
        return $word;
    }

    private function doubleQuoted(int $depth): string
    {
        $text = '';
        while ($this->i < $this->n) {
            $c = $this->s[$this->i++];
            if ($c === '"') {
                break;
            }
            if ($c === '\\' && \strpos("\$`\"\\\n", $this->s[$this->i] ?? '') !== false) {
                $text .= $this->s[$this->i++];
            } elseif (!$this->substitution($c, $depth)) {
                $text .= $c;
            }
        }
        return $text;
    }

    /**
     * A command substitution that starts with $c (a backtick, or `$` before
     * `(`), parsed as a command list of its own; false if $c starts none.
     */
    private function substitution(string $c, int $depth): bool
    {
        if ($c === '$' && ($this->s[$this->i] ?? '') === '(') {
            $this->i++;
            $end = ')';
        } elseif ($c === '`') {
            $end = '`';
        } else {
            return false;
        }
        if ($depth < 16) {
            $this->list($end, $depth + 1);
        }
        return true;
    }
}
