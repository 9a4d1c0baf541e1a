<?php declare(strict_types=1);

namespace PhpFuzzer;

/**
 * The object a target file configures, as `$config` (or `$fuzzer`).
 * Same API as nikic/php-fuzzer's Config, so existing targets run unchanged.
 */
final class Config
{
    /** @var \Closure|null */
    public $target = null;
    /** @var int|null */
    public $maxLen = null;
    /** @var list<string> */
    public $dictionaries = [];
    /** @var list<class-string<\Throwable>> */
    public $allowedExceptions = [\Exception::class];
    /** @var string|null */
    public $grammar = null;
    /** @var \Closure|null called as ($data, $maxLen, $seed), returns the mutant */
    public $customMutator = null;
    /** @var \Closure|null called as ($a, $b, $maxLen, $seed), returns the mutant */
    public $customCrossOver = null;
    /** @var list<string>|null the bug detectors on (null: all); `fuzz --detectors` wins */
    public $detectors = null;
    /** @var list<string> folders a run may write in, besides the scratch folder */
    public $allowedWrites = [];
    /**
     * @internal folders (ending in '/') whose files are never instrumented:
     * a fuzz test's PHPUnit and php-fuzz's own code
     * @var list<string>
     */
    public $uninstrumented = [];
    /**
     * @internal throwables that are findings even when an allowed class
     * covers them: a fuzz test's failed assertions
     * @var list<class-string<\Throwable>>
     */
    public $neverAllowed = [];
    /**
     * @internal a typed target's parameter schema, JSON (docs/autofuzz.md):
     * set by autofuzz and typed fuzz tests, whose inputs are argument entries
     * @var string|null
     */
    public $arguments = null;

    public function setTarget(\Closure $target): void
    {
        $this->target = $target;
    }

    public function setMaxLen(int $maxLen): void
    {
        if ($maxLen < 1) {
            throw new \InvalidArgumentException("setMaxLen() expects a positive length, got $maxLen");
        }
        $this->maxLen = $maxLen;
    }

    public function addDictionary(string $path): void
    {
        if (!is_file($path) || !is_readable($path)) {
            throw new \InvalidArgumentException("addDictionary(): cannot read dictionary file '$path'");
        }
        $this->dictionaries[] = realpath($path) ?: $path;
    }

    /**
     * Mutate inputs with this tree-sitter grammar as well as byte by byte
     * (`php-fuzz grammars` lists them); `fuzz --grammar` overrides it.
     */
    public function setGrammar(string $name): void
    {
        if ($name === '') {
            throw new \InvalidArgumentException("setGrammar() expects a grammar name such as 'json'");
        }
        $this->grammar = $name;
    }

    /** @param list<class-string<\Throwable>> $allowedExceptions */
    public function setAllowedExceptions(array $allowedExceptions): void
    {
        foreach ($allowedExceptions as $class) {
            if (!\is_string($class)) {
                throw new \InvalidArgumentException('setAllowedExceptions() expects a list of class names');
            }
        }
        $this->allowedExceptions = array_values($allowedExceptions);
    }

    /** php-fuzz takes its mutants from $mutator(string $data, int $maxLen, int $seed): string. */
    public function setCustomMutator(callable $mutator): void
    {
        $this->customMutator = \Closure::fromCallable($mutator);
    }

    /** Crossover mutants come from $crossOver(string $a, string $b, int $maxLen, int $seed): string. */
    public function setCustomCrossOver(callable $crossOver): void
    {
        $this->customCrossOver = \Closure::fromCallable($crossOver);
    }

    /**
     * The bug detectors to run (`php-fuzz detectors` lists them): names,
     * 'all' or 'none'. `php-fuzz fuzz --detectors` wins over this.
     *
     * @param list<string> $detectors
     */
    public function setDetectors(array $detectors): void
    {
        $known = ['command-injection', 'code-injection', 'object-injection', 'class-injection',
            'path-traversal', 'xxe', 'ssrf', 'regex-dos'];
        $chosen = [];
        foreach ($detectors as $name) {
            if ($name === 'all') {
                $chosen = $known;
            } elseif ($name !== 'none' && !in_array($name, $known, true)) {
                throw new \InvalidArgumentException(sprintf(
                    "setDetectors(): unknown detector %s: the detectors are %s, or 'all' or 'none'",
                    is_string($name) ? "'$name'" : gettype($name),
                    implode(', ', $known)
                ));
            } elseif ($name !== 'none') {
                $chosen[] = $name;
            }
        }
        $this->detectors = array_values(array_unique($chosen));
    }

    /**
     * Lets runs write, rename and delete files under $dir (they may always
     * in the campaign's scratch folder, sys_get_temp_dir()).
     */
    public function allowWrites(string $dir): void
    {
        $real = realpath($dir);
        if ($real === false || !is_dir($real)) {
            throw new \InvalidArgumentException("allowWrites(): '$dir' is not a folder");
        }
        $this->allowedWrites[] = $real;
    }
}
