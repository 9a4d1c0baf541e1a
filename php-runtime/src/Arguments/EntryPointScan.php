<?php declare(strict_types=1);

namespace PhpFuzz\Arguments;

/**
 * `php-fuzz scan DIR`'s list of a package's entry points, ranked
 * (docs/autofuzz.md): every public function and method declared in the
 * files under DIR that autofuzz can call (EntryPoints' rules, and every
 * parameter buildable: Signature), with how much of the package it reaches
 * in a static call graph (CallGraph), whether it takes input (a string,
 * array, list, shape or mixed parameter) and whether its name says it
 * parses or transforms something.
 *
 * Files are read with the tokenizer first; a class is loaded (through the
 * autoloader) only once its package parents could be and its outside
 * parents exist. A file of functions the autoloader does not load is
 * included when it only declares things.
 *
 * @internal php-fuzz's own, not an API
 */
final class EntryPointScan
{
    /** Folders below DIR whose files are not the package's API. */
    private const SKIPPED_FOLDERS = ['vendor', 'tests', 'test', 'Tests'];

    /** Words in a name that say it reads or transforms input. */
    private const NAME_WORDS = [
        'parse', 'decode', 'read', 'load', 'from', 'unserialize', 'deserialize', 'import', 'lex', 'tokeni', 'scan',
        'compile', 'render', 'format', 'validate', 'sanitize', 'normalize', 'convert', 'transform', 'extract',
        'process', 'handle', 'filter', 'match', 'evaluate', 'interpret', 'build',
    ];

    /** Schema kinds that carry input. */
    private const INPUT_KINDS = ['string', 'array', 'list', 'shape', 'mixed'];

    /** The file of the class or function being loaded or read, for a fatal error's report. */
    private static ?string $current = null;

    private readonly CallGraph $graph;
    /** @var array<string, array{name: string, kind: string, abstract: bool, parents: list<string>, file: string, line: int}> lower-case class => declaration */
    private array $classes = [];
    /** @var list<array> */
    private array $entries = [];
    /** @var list<array{callee: string, file: string, line: int, reason: string}> */
    private array $skipped = [];
    /** @var array<string, ?string> lower-case class => why it cannot be loaded (null: loaded) */
    private array $loadable = [];

    /**
     * @param string $root DIR, real path
     * @param list<array{name: string, kind: string, abstract: bool, parents: list<string>, file: string, line: int}> $declarations
     * @param array<string, string> $brokenFiles file => why it is not loaded
     */
    private function __construct(private readonly string $root, private readonly array $declarations, private readonly array $brokenFiles)
    {
        $this->graph = CallGraph::of(\array_values(\array_unique(\array_column($declarations, 'file'))));
        foreach ($declarations as $declaration) {
            if ($declaration['kind'] !== 'function') {
                $this->classes[\strtolower($declaration['name'])] ??= $declaration;
            }
        }
    }

    /**
     * The entry points of the package in $dir, best first, and those left
     * out with the reason: JSON-ready.
     *
     * @param array<string, string> $brokenFiles files not to load (they stopped PHP in an earlier run) => why
     * @return array{entry_points: list<array>, skipped: list<array{callee: string, file: string, line: int, reason: string}>}
     */
    public static function scan(string $dir, array $brokenFiles = []): array
    {
        $root = \realpath($dir);
        if ($root === false || !\is_dir($root)) {
            throw new \InvalidArgumentException("no such folder: $dir");
        }
        $declarations = \array_values(\array_filter(
            ClassFinder::declarationsIn($root),
            static fn (array $declaration): bool => !self::inSkippedFolder($root, $declaration['file']),
        ));

        return (new self($root, $declarations, $brokenFiles))->run();
    }

    /** The file of the class or function the scan is loading or reading now, or null. */
    public static function current(): ?string
    {
        return self::$current;
    }

    /** The score of an entry point: log2(1 + reach), doubled when it takes input, plus its name score. */
    public static function score(int $reach, bool $takesInput, int $nameScore): float
    {
        return \round(\log(1 + $reach, 2) * ($takesInput ? 2 : 1) + $nameScore, 4);
    }

    /** 2 when $name says it reads or transforms input (parse, decode, render…), else 0. */
    public static function nameScore(string $name): int
    {
        $lower = \strtolower($name);
        foreach (self::NAME_WORDS as $word) {
            if (\str_contains($lower, $word)) {
                return 2;
            }
        }

        return 0;
    }

    /** Whether a schema's parameters (after `this`) take a string, array, list, shape or mixed value. */
    public static function takesInput(array $schema): bool
    {
        foreach ($schema['parameters'] as $parameter) {
            if ($parameter['name'] !== 'this' && self::carriesInput($parameter['type'])) {
                return true;
            }
        }

        return false;
    }

    /** @return array{entry_points: list<array>, skipped: list<array{callee: string, file: string, line: int, reason: string}>} */
    private function run(): array
    {
        foreach ($this->declarations as $declaration) {
            if ($declaration['kind'] === 'class' || $declaration['kind'] === 'enum') {
                $this->guarded($declaration, fn () => $this->scanClass($declaration));
            }
        }
        foreach ($this->declarations as $declaration) {
            if ($declaration['kind'] === 'function' && $this->graph->declaresFunction($declaration['file'], $declaration['name'])) {
                $this->guarded($declaration, fn () => $this->scanFunction($declaration));
            }
        }
        self::$current = null;

        return ['entry_points' => $this->ranked(), 'skipped' => $this->sortedSkips()];
    }

    /**
     * Runs $scan, one class's or function's, unless its file is broken
     * (skipped with the reason); an exception it lets through skips the
     * declaration (its entry points listed so far stay).
     *
     * @param array{name: string, kind: string, abstract: bool, parents: list<string>, file: string, line: int} $declaration
     */
    private function guarded(array $declaration, \Closure $scan): void
    {
        $broken = $this->brokenFiles[$declaration['file']] ?? null;
        if ($broken !== null) {
            $this->skip($declaration['name'], $declaration['file'], $declaration['line'], $broken);

            return;
        }
        try {
            $scan();
        } catch (\Throwable $e) {
            $this->skip($declaration['name'], $declaration['file'], $declaration['line'], 'reading it failed: ' . \get_class($e) . ': ' . $e->getMessage());
        }
    }

    /** Whether $file is in a vendor/, tests/, test/ or Tests/ folder below $root. */
    private static function inSkippedFolder(string $root, string $file): bool
    {
        $relative = \substr($file, \strlen($root) + 1);
        $folders = \explode('/', $relative);
        \array_pop($folders);

        return \array_intersect($folders, self::SKIPPED_FOLDERS) !== [];
    }

    /** Whether $file is under the folder scanned. */
    private function underRoot(string|false $file): bool
    {
        if ($file === false) {
            return false;
        }
        $real = \realpath($file);

        return $real !== false && \str_starts_with($real, $this->root . '/');
    }

    /** @param array{name: string, kind: string, abstract: bool, parents: list<string>, file: string, line: int} $declaration */
    private function scanClass(array $declaration): void
    {
        self::$current = $declaration['file'];
        $why = $this->whyNotLoadable(\strtolower($declaration['name']), []);
        if ($why !== null) {
            $this->skip($declaration['name'], $declaration['file'], $declaration['line'], $why);

            return;
        }
        $class = new \ReflectionClass($declaration['name']);
        if (!$this->underRoot($class->getFileName())) {
            $this->skip($declaration['name'], $declaration['file'], $declaration['line'], "the autoloader loads {$class->getName()} from " . $class->getFileName() . ', outside the folder');

            return;
        }
        $methods = $class->getMethods();
        \usort($methods, static fn (\ReflectionMethod $a, \ReflectionMethod $b): int => \strcmp($a->getName(), $b->getName()));
        foreach ($methods as $method) {
            if ($this->isOwnMethod($class, $method)) {
                $this->consider($method);
            }
        }
    }

    /**
     * Whether $method is one of $class's entry-point candidates: declared in
     * it (or a trait it uses) in a file under the folder, with a body; a
     * constructor only of a concrete class, with parameters.
     */
    private function isOwnMethod(\ReflectionClass $class, \ReflectionMethod $method): bool
    {
        if ($method->getDeclaringClass()->getName() !== $class->getName() || $method->isAbstract() || !$this->underRoot($method->getFileName())) {
            return false;
        }

        return !$method->isConstructor() || (!$class->isAbstract() && $method->getNumberOfParameters() > 0);
    }

    /**
     * Null once $class (lower case, declared in the package) is loaded, or
     * why it cannot be: a parent that cannot be loaded, an autoloader that
     * does not find it or throws.
     *
     * @param array<string, true> $seen
     */
    private function whyNotLoadable(string $class, array $seen): ?string
    {
        if (\array_key_exists($class, $this->loadable)) {
            return $this->loadable[$class];
        }
        $declaration = $this->classes[$class];
        $why = $this->whyParentsNotLoadable($declaration, $seen + [$class => true]);
        if ($why === null && isset($this->brokenFiles[$declaration['file']])) {
            $why = $this->brokenFiles[$declaration['file']];
        }
        if ($why === null) {
            $why = $this->load($declaration);
        }

        return $this->loadable[$class] = $why;
    }

    /**
     * @param array{name: string, kind: string, abstract: bool, parents: list<string>, file: string, line: int} $declaration
     * @param array<string, true> $seen
     */
    private function whyParentsNotLoadable(array $declaration, array $seen): ?string
    {
        foreach ($this->graph->parentsOf($declaration['name']) as $parent) {
            $lower = \strtolower($parent);
            if (isset($seen[$lower])) {
                return "{$declaration['name']} extends itself through $parent";
            }
            $why = isset($this->classes[$lower])
                ? $this->whyNotLoadable($lower, $seen)
                : (self::exists($parent) ? null : 'the autoloader cannot load it');
            if ($why !== null) {
                return "{$declaration['name']} needs $parent, and $why";
            }
        }

        return null;
    }

    /** @param array{name: string, kind: string, abstract: bool, parents: list<string>, file: string, line: int} $declaration */
    private function load(array $declaration): ?string
    {
        $previous = self::$current;
        self::$current = $declaration['file'];
        try {
            $loaded = self::exists($declaration['name'], true);
        } catch (\Throwable $e) {
            return 'loading it failed: ' . \get_class($e) . ': ' . $e->getMessage();
        } finally {
            self::$current = $previous;
        }

        return $loaded ? null : 'the autoloader cannot load it';
    }

    /** Whether a class, interface, trait or enum exists, autoloaded (an autoloader's exception: thrown if $throw, else a no). */
    private static function exists(string $name, bool $throw = false): bool
    {
        try {
            return \class_exists($name) || \interface_exists($name) || \trait_exists($name);
        } catch (\Throwable $e) {
            if ($throw) {
                throw $e;
            }

            return false;
        }
    }

    /** @param array{name: string, kind: string, abstract: bool, parents: list<string>, file: string, line: int} $declaration */
    private function scanFunction(array $declaration): void
    {
        self::$current = $declaration['file'];
        $why = $this->loadFunction($declaration);
        if ($why !== null) {
            $this->skip($declaration['name'], $declaration['file'], $declaration['line'], $why);

            return;
        }
        $function = new \ReflectionFunction($declaration['name']);
        if (!$this->underRoot($function->getFileName())) {
            $this->skip($declaration['name'], $declaration['file'], $declaration['line'], "{$function->getName()}() is declared in " . $function->getFileName() . ', outside the folder');

            return;
        }
        $this->consider($function);
    }

    /**
     * Null once the function is declared, or why it is not: a file the
     * autoloader does not load is included if it only declares things and
     * nothing it declares exists yet.
     *
     * @param array{name: string, kind: string, abstract: bool, parents: list<string>, file: string, line: int} $declaration
     */
    private function loadFunction(array $declaration): ?string
    {
        $file = $declaration['file'];
        if (\function_exists($declaration['name'])) {
            return null;
        }
        if (\in_array(\realpath($file), \array_map('realpath', \get_included_files()), true)) {
            return "{$declaration['name']}() is not declared: " . \basename($file) . ' declares it only under a condition';
        }
        if (!$this->graph->onlyDeclares($file)) {
            return "{$declaration['name']}() is not declared: the autoloader does not include $file, and it runs code when included";
        }
        if ($this->declaresExisting($file)) {
            return "{$declaration['name']}() is not declared: the autoloader does not include $file, and some of what it declares exists already";
        }
        try {
            (static function (string $file): void {
                require_once $file;
            })($file);
        } catch (\Throwable $e) {
            return "including $file failed: " . \get_class($e) . ': ' . $e->getMessage();
        }

        return \function_exists($declaration['name']) ? null : "{$declaration['name']}() is not declared: " . \basename($file) . ' declares it only under a condition';
    }

    /** Whether a class or function $file declares exists already (including it would be a fatal error). */
    private function declaresExisting(string $file): bool
    {
        foreach (SourceFile::at($file)->declarations() as $declaration) {
            $name = $declaration['name'];
            $exists = $declaration['kind'] === 'function'
                ? \function_exists($name)
                : \class_exists($name, false) || \interface_exists($name, false) || \trait_exists($name, false);
            if ($exists) {
                return true;
            }
        }

        return false;
    }

    /** Lists a function or method as an entry point, or as skipped with the reason. */
    private function consider(\ReflectionFunctionAbstract $function): void
    {
        $callee = ($function instanceof \ReflectionMethod ? $function->getDeclaringClass()->getName() . '::' : '') . $function->getName();
        $file = (string) $function->getFileName();
        $line = (int) $function->getStartLine();
        try {
            $schema = Signature::ofMethod($function);
        } catch (NotFuzzable $e) {
            $this->skip($callee, $file, $line, $e->getMessage());

            return;
        } catch (\Throwable $e) {
            $this->skip($callee, $file, $line, 'reading its parameters failed: ' . \get_class($e) . ': ' . $e->getMessage());

            return;
        }
        $this->entries[] = $this->entry($function, $callee, $schema);
    }

    private function entry(\ReflectionFunctionAbstract $function, string $callee, array $schema): array
    {
        $node = $function instanceof \ReflectionMethod
            ? $this->graph->methodNode($function->getDeclaringClass()->getName(), $function->getName())
            : $this->graph->functionNode($function->getName());
        $reach = $this->graph->reach($node);
        $takesInput = self::takesInput($schema);
        $nameScore = $function instanceof \ReflectionMethod && $function->isConstructor() ? 0 : self::nameScore($function->getName());

        return [
            'callee' => $callee,
            'kind' => self::kind($function),
            'file' => (string) $function->getFileName(),
            'line' => (int) $function->getStartLine(),
            'parameters' => $function->getNumberOfParameters(),
            'takes_input' => $takesInput,
            'reach' => $reach,
            'name_score' => $nameScore,
            'score' => self::score($reach, $takesInput, $nameScore),
        ];
    }

    /** 'function'; 'static' for a static method or a constructor (no object to build first); else 'instance'. */
    private static function kind(\ReflectionFunctionAbstract $function): string
    {
        if (!$function instanceof \ReflectionMethod) {
            return 'function';
        }

        return $function->isStatic() || $function->isConstructor() ? 'static' : 'instance';
    }

    private static function carriesInput(array $type): bool
    {
        if ($type['kind'] === 'union') {
            foreach ($type['of'] as $member) {
                if (self::carriesInput($member)) {
                    return true;
                }
            }

            return false;
        }

        return \in_array($type['kind'], self::INPUT_KINDS, true);
    }

    private function skip(string $callee, string $file, int $line, string $reason): void
    {
        $this->skipped[] = ['callee' => $callee, 'file' => $file, 'line' => $line, 'reason' => $reason];
    }

    /** @return list<array> the entry points by score, then reach (both descending), then name, with their rank */
    private function ranked(): array
    {
        $entries = $this->entries;
        \usort($entries, static fn (array $a, array $b): int => [$b['score'], $b['reach']] <=> [$a['score'], $a['reach']] ?: \strcmp($a['callee'], $b['callee']));
        foreach ($entries as $i => &$entry) {
            $entry['rank'] = $i + 1;
        }

        return $entries;
    }

    /** @return list<array{callee: string, file: string, line: int, reason: string}> by file, line, then name */
    private function sortedSkips(): array
    {
        $skipped = $this->skipped;
        \usort($skipped, static fn (array $a, array $b): int => \strcmp($a['file'], $b['file']) ?: $a['line'] <=> $b['line'] ?: \strcmp($a['callee'], $b['callee']));

        return $skipped;
    }
}
