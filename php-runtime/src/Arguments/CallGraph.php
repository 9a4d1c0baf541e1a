<?php declare(strict_types=1);

namespace PhpFuzz\Arguments;

/**
 * A static call graph of a package, read with PHP's tokenizer (one pass per
 * file, nothing loaded): its nodes are the functions and methods with a body
 * the files declare, its edges the calls their bodies make.
 *
 * - `$this->m(`, `self::m(`, `static::m(`: m of the class, looked up through
 *   its package parents and traits; not found there (an abstract method, or
 *   a trait's caller): every package method named m;
 * - `parent::m(`, `Name::m(` and `new Name(` (its __construct), names
 *   resolved with the file's namespace and `use` imports;
 * - `fn(`: the package function, namespaced first, then global, as PHP does;
 * - `$var->m(`, `$this->prop->m(`, `$var::m(`, `f()->m(`: an unknown
 *   receiver, so every package method named m (at most MAX_TARGETS of them,
 *   the first by name): an over-approximation.
 *
 * Calls in closures and in anonymous classes count as calls of the function
 * they are written in. reach() is the number of body lines reachable.
 *
 * @internal php-fuzz's own, not an API
 */
final class CallGraph
{
    /** The most methods an unknown receiver's call leads to. */
    public const MAX_TARGETS = 10;

    /** Functions a file may call at its top level and still only declare things. */
    private const DECLARING_CALLS = [
        'function_exists', 'class_exists', 'interface_exists', 'trait_exists', 'enum_exists', 'defined', 'define',
        'version_compare', 'extension_loaded', 'method_exists', '\\function_exists', '\\defined', '\\define',
        '\\class_exists', '\\interface_exists', '\\version_compare', '\\extension_loaded',
    ];

    /** Tokens at a file's top level that run code. */
    private const RUNNING_TOKENS = [
        \T_VARIABLE, \T_ECHO, \T_PRINT, \T_INCLUDE, \T_INCLUDE_ONCE, \T_REQUIRE, \T_REQUIRE_ONCE,
        \T_EXIT, \T_EVAL, \T_RETURN, \T_NEW, \T_OBJECT_OPERATOR, \T_DOUBLE_COLON, \T_STATIC,
    ];

    /** @var array<string, array{name: string, file: string, line: int, lines: int}> node key (lower case) => its function */
    private array $nodes = [];
    /** @var array<string, list<list<string>>> node key => the calls its body makes, unresolved */
    private array $calls = [];
    /** @var array<string, list<string>> lower-case class => its parents, interfaces and traits (lower case) */
    private array $parents = [];
    /** @var array<string, list<string>> lower-case class => its parents, interfaces and traits as written (resolved) */
    private array $parentNames = [];
    /** @var array<string, list<string>> lower-case method name => node keys, sorted */
    private array $byName = [];
    /** @var array<string, bool> file => whether its top level runs code */
    private array $runs = [];
    /** @var array<string, list<string>>|null node key => node keys it calls */
    private ?array $edges = null;
    /** @var array<string, ?string> lookup() answers */
    private array $lookups = [];

    // The file being read.
    /** @var list<\PhpToken> */
    private array $tokens = [];
    private int $i = 0;
    private int $depth = 0;
    private string $file = '';
    /** @var list<array{?string, int}> the classes whose body is open: lower-case name (null: anonymous), depth */
    private array $classes = [];
    /**
     * The functions whose body is open: the node their calls count for (null:
     * none), depth, first line, and their own node (null: a method of an
     * anonymous class, whose calls count for the function around it).
     *
     * @var list<array{?string, int, int, ?string}>
     */
    private array $functions = [];
    /** @var array{string, ?string, int, ?string}|null a class or function whose body opens at the next `{`: kind, key, line, node */
    private ?array $pending = null;
    /** @var array<string, string> `use function` imports: lower-case alias => name */
    private array $functionImports = [];

    private function __construct()
    {
    }

    /**
     * The graph of $files, their classes' parents read from their declarations.
     *
     * @param list<string> $files
     */
    public static function of(array $files): self
    {
        $graph = new self();
        foreach ($files as $file) {
            $graph->readFile($file);
        }
        foreach ($graph->byName as &$keys) {
            \sort($keys, \SORT_STRING);
        }

        return $graph;
    }

    /** The node of $class's method $method (declared in it, its package parents or traits), or null. */
    public function methodNode(string $class, string $method): ?string
    {
        return $this->lookup(\strtolower(\ltrim($class, '\\')), \strtolower($method));
    }

    /** The node of function $name, or null. */
    public function functionNode(string $name): ?string
    {
        $key = \strtolower(\ltrim($name, '\\'));

        return isset($this->nodes[$key]) && !\str_contains($key, '::') ? $key : null;
    }

    /** Whether $file declares function $name with a body (not a method: SourceFile may take one for a function). */
    public function declaresFunction(string $file, string $name): bool
    {
        $key = $this->functionNode($name);

        return $key !== null && $this->nodes[$key]['file'] === $file;
    }

    /**
     * The parents, interfaces and traits the package declares $class with
     * (as written, resolved; lower case).
     *
     * @return list<string>
     */
    public function parentsOf(string $class): array
    {
        return $this->parentNames[\strtolower(\ltrim($class, '\\'))] ?? [];
    }

    /** Whether $file only declares things (functions, classes, constants): including it runs no code. */
    public function onlyDeclares(string $file): bool
    {
        return isset($this->runs[$file]) && !$this->runs[$file];
    }

    /** The number of nodes. */
    public function size(): int
    {
        return \count($this->nodes);
    }

    /**
     * The body lines of every function reachable from $key (itself
     * included), or 0 for an unknown node.
     */
    public function reach(?string $key): int
    {
        if ($key === null || !isset($this->nodes[$key])) {
            return 0;
        }
        $edges = $this->edges();
        $seen = [$key => true];
        $queue = [$key];
        $lines = 0;
        while ($queue !== []) {
            $node = \array_pop($queue);
            $lines += $this->nodes[$node]['lines'];
            foreach ($edges[$node] ?? [] as $next) {
                if (!isset($seen[$next])) {
                    $seen[$next] = true;
                    $queue[] = $next;
                }
            }
        }

        return $lines;
    }

    /**
     * The edges, resolved once every file is read.
     *
     * @return array<string, list<string>>
     */
    private function edges(): array
    {
        if ($this->edges === null) {
            $this->edges = [];
            foreach ($this->calls as $key => $calls) {
                $targets = [];
                foreach ($calls as $call) {
                    foreach ($this->targets($call) as $target) {
                        $targets[$target] = true;
                    }
                }
                unset($targets[$key]);
                $this->edges[$key] = \array_keys($targets);
            }
        }

        return $this->edges;
    }

    /**
     * The nodes one call may reach.
     *
     * @param list<string> $call [kind, …]: ['self', class, m], ['parent', class, m], ['class', class, m], ['name', m], ['function', name, …]
     * @return list<string>
     */
    private function targets(array $call): array
    {
        switch ($call[0]) {
            case 'self':
                $found = $this->lookup($call[1], $call[2]);

                return $found !== null ? [$found] : $this->named($call[2]);
            case 'parent':
                foreach ($this->parents[$call[1]] ?? [] as $parent) {
                    if (($found = $this->lookup($parent, $call[2])) !== null) {
                        return [$found];
                    }
                }

                return [];
            case 'class':
                $found = $this->lookup($call[1], $call[2]);

                return $found !== null ? [$found] : [];
            case 'name':
                return $this->named($call[1]);
            default:
                foreach (\array_slice($call, 1) as $name) {
                    if (isset($this->nodes[$name])) {
                        return [$name];
                    }
                }

                return [];
        }
    }

    /** @return list<string> the first MAX_TARGETS package methods named $method */
    private function named(string $method): array
    {
        return \array_slice($this->byName[$method] ?? [], 0, self::MAX_TARGETS);
    }

    /** The node of $method in $class or the first of its package ancestors and traits that has a body. */
    private function lookup(string $class, string $method): ?string
    {
        $memo = $class . '::' . $method;
        if (!\array_key_exists($memo, $this->lookups)) {
            $this->lookups[$memo] = null;
            $queue = [$class];
            $seen = [$class => true];
            while ($queue !== [] && $this->lookups[$memo] === null) {
                $current = \array_shift($queue);
                if (isset($this->nodes[$current . '::' . $method])) {
                    $this->lookups[$memo] = $current . '::' . $method;
                }
                foreach ($this->parents[$current] ?? [] as $parent) {
                    if (!isset($seen[$parent])) {
                        $seen[$parent] = true;
                        $queue[] = $parent;
                    }
                }
            }
        }

        return $this->lookups[$memo];
    }

    private function readFile(string $file): void
    {
        $code = \is_file($file) ? @\file_get_contents($file) : false;
        if (!\is_string($code)) {
            return;
        }
        foreach (SourceFile::at($file)->declarations() as $declaration) {
            if ($declaration['kind'] !== 'function') {
                $class = \strtolower($declaration['name']);
                $this->parentNames[$class] = $declaration['parents'];
                $this->parents[$class] = \array_map('strtolower', $declaration['parents']);
            }
        }
        $this->file = $file;
        $this->runs[$file] = false;
        $this->tokenize($code);
        [$this->i, $this->depth, $this->classes, $this->functions, $this->pending, $this->functionImports] = [0, 0, [], [], null, []];
        for ($count = \count($this->tokens); $this->i < $count; $this->i++) {
            $this->step($this->tokens[$this->i]);
        }
        $this->tokens = [];
    }

    /** The tokens of $code that are not whitespace, comments or HTML (HTML that is not blank: the file runs code). */
    private function tokenize(string $code): void
    {
        $this->tokens = [];
        foreach (\PhpToken::tokenize($code) as $token) {
            if ($token->is(\T_INLINE_HTML) && \trim($token->text) !== '') {
                $this->runs[$this->file] = true;
            } elseif (!$token->is([\T_WHITESPACE, \T_COMMENT, \T_DOC_COMMENT, \T_INLINE_HTML])) {
                $this->tokens[] = $token;
            }
        }
    }

    private function step(\PhpToken $token): void
    {
        if ($token->text === '{' || $token->is([\T_CURLY_OPEN, \T_DOLLAR_OPEN_CURLY_BRACES])) {
            $this->open();
        } elseif ($token->text === '}') {
            $this->close($token->line);
        } elseif ($token->is(\T_ATTRIBUTE)) {
            $this->skipAttribute();
        } elseif ($token->is([\T_CLASS, \T_INTERFACE, \T_TRAIT, \T_ENUM])) {
            $this->classKeyword($token);
        } elseif ($token->is(\T_FUNCTION)) {
            $this->functionKeyword($token->line);
        } elseif ($token->is(\T_USE)) {
            $this->useKeyword();
        } elseif ($this->functions !== []) {
            $this->call($token);
        } elseif ($this->classes === []) {
            $this->topLevel($token);
        }
    }

    private function peek(int $offset = 1): ?\PhpToken
    {
        return $this->tokens[$this->i + $offset] ?? null;
    }

    /** A `{`: a pending class or function body opens at this depth. */
    private function open(): void
    {
        $this->depth++;
        if ($this->pending === null) {
            return;
        }
        [$kind, $key, $line, $node] = $this->pending + [3 => null];
        $this->pending = null;
        if ($kind === 'class') {
            $this->classes[] = [$key, $this->depth];
        } else {
            $this->functions[] = [$key, $this->depth, $line, $node];
        }
    }

    /** A `}`: closes the innermost function or class whose body opened at this depth. */
    private function close(int $line): void
    {
        $function = \end($this->functions);
        if ($function !== false && $function[1] === $this->depth) {
            \array_pop($this->functions);
            $this->addNode($function[3], $function[2], $line);
        }
        $class = \end($this->classes);
        if ($class !== false && $class[1] === $this->depth) {
            \array_pop($this->classes);
        }
        $this->depth--;
    }

    /** Records a function's body lines (once: a node declared twice keeps its first body). */
    private function addNode(?string $key, int $start, int $end): void
    {
        if ($key === null || isset($this->nodes[$key])) {
            return;
        }
        $this->nodes[$key] = ['name' => $key, 'file' => $this->file, 'line' => $start, 'lines' => $end - $start + 1];
        $method = \strrchr($key, ':');
        if ($method !== false) {
            $this->byName[\substr($method, 1)][] = $key;
        }
    }

    /** `#[…]`: skipped whole. */
    private function skipAttribute(): void
    {
        $brackets = 1;
        while ($brackets > 0 && ($next = $this->peek()) !== null) {
            $this->i++;
            $brackets += match ($next->text) {
                '[' => 1,
                ']' => -1,
                default => 0,
            };
        }
    }

    private function classKeyword(\PhpToken $keyword): void
    {
        $previous = $this->peek(-1);
        if ($previous !== null && $previous->is(\T_NEW)) {
            $this->pending = ['class', null, $keyword->line];

            return;
        }
        $name = $this->peek();
        if ($name === null || !$name->is(\T_STRING) || ($previous !== null && $previous->is([\T_DOUBLE_COLON, \T_OBJECT_OPERATOR, \T_NULLSAFE_OBJECT_OPERATOR]))) {
            return;
        }
        [$namespace] = SourceFile::at($this->file)->scopeAt($keyword->line);
        $this->pending = ['class', \strtolower(self::qualify($namespace, $name->text)), $keyword->line];
    }

    /**
     * `function name(…) {`: a node whose body opens at the next `{` (none
     * for an abstract method); a closure is read as part of its function.
     */
    private function functionKeyword(int $line): void
    {
        $offset = $this->peek()?->text === '&' ? 2 : 1;
        $name = $this->peek($offset);
        if (!self::isName($name) || $this->peek($offset + 1)?->text !== '(' || $this->peek(-1)?->is([\T_DOUBLE_COLON, \T_OBJECT_OPERATOR])) {
            return;
        }
        [$key, $node] = $this->functionKeys($name->text, $line);
        if ($this->skipSignature()) {
            $this->pending = ['function', $key, $line, $node];
        }
    }

    /**
     * The node a function named $name declared here counts its calls for,
     * and its own node: a method's, a function's, or for a method of an
     * anonymous class, the function around it and none.
     *
     * @return array{?string, ?string}
     */
    private function functionKeys(string $name, int $line): array
    {
        $class = \end($this->classes);
        $function = \end($this->functions);
        $inClassBody = $class !== false && ($function === false || $function[1] < $class[1]);
        if (!$inClassBody) {
            [$namespace] = SourceFile::at($this->file)->scopeAt($line);
            $key = \strtolower(self::qualify($namespace, $name));

            return [$key, $key];
        }
        if ($class[0] !== null) {
            return [$class[0] . '::' . \strtolower($name), $class[0] . '::' . \strtolower($name)];
        }

        return [$function !== false ? $function[0] : null, null];
    }

    /**
     * Moves past a function's parameters and return type, to just before
     * its body's `{`: true, or past its `;` (no body): false.
     */
    private function skipSignature(): bool
    {
        $parens = 0;
        while (($next = $this->peek()) !== null) {
            if ($parens === 0 && ($next->text === '{' || $next->text === ';')) {
                if ($next->text === ';') {
                    $this->i++;
                }

                return $next->text === '{';
            }
            $parens += match ($next->text) {
                '(' => 1,
                ')' => -1,
                default => 0,
            };
            $this->i++;
        }

        return false;
    }

    /** `use`: a class's traits, a file's `use function` imports, or a closure's (nothing). */
    private function useKeyword(): void
    {
        $class = \end($this->classes);
        $function = \end($this->functions);
        if ($class !== false && $class[1] === $this->depth && ($function === false || $function[1] < $class[1])) {
            $this->traitUse($class[0]);
        } elseif ($this->classes === [] && $this->functions === [] && $this->peek()?->is(\T_FUNCTION)) {
            $this->functionImport();
        }
    }

    /** `use A, B;` or `use A, B { … }` in a class body: A and B become parents for method lookups. */
    private function traitUse(?string $class): void
    {
        while (($next = $this->peek()) !== null && $next->text !== ';' && $next->text !== '{') {
            $this->i++;
            if ($class !== null && $next->is([\T_STRING, \T_NAME_QUALIFIED, \T_NAME_FULLY_QUALIFIED, \T_NAME_RELATIVE])) {
                $trait = $this->resolveClass($next->text, $next->line);
                $this->parentNames[$class][] = $trait;
                $this->parents[$class][] = \strtolower($trait);
            }
        }
        if ($this->peek()?->text === '{') {
            $this->i++;
            while (($next = $this->peek()) !== null && $next->text !== '}') {
                $this->i++;
            }
            $this->i++;
        }
    }

    /** `use function A\b [as c], …;` (not the group form). */
    private function functionImport(): void
    {
        $this->i++;
        while (($next = $this->peek()) !== null && $next->text !== ';' && $next->text !== '{') {
            $this->i++;
            if ($next->is([\T_STRING, \T_NAME_QUALIFIED, \T_NAME_FULLY_QUALIFIED])) {
                $name = \ltrim($next->text, '\\');
                $alias = \substr($name, (int) \strrpos('\\' . $name, '\\'));
                if ($this->peek()?->is(\T_AS) && $this->peek(2)?->is(\T_STRING)) {
                    $alias = $this->peek(2)->text;
                    $this->i += 2;
                }
                $this->functionImports[\strtolower($alias)] = \strtolower($name);
            }
        }
    }

    /** A token in a function body: records the call it starts, if any. */
    private function call(\PhpToken $token): void
    {
        $key = \end($this->functions)[0];
        if ($key === null) {
            return;
        }
        $call = match (true) {
            $token->is(\T_NEW) => $this->newCall(),
            $token->is(\T_DOUBLE_COLON) => $this->staticCall(),
            $token->is([\T_OBJECT_OPERATOR, \T_NULLSAFE_OBJECT_OPERATOR]) => $this->methodCall(),
            $token->is([\T_STRING, \T_NAME_QUALIFIED, \T_NAME_FULLY_QUALIFIED, \T_NAME_RELATIVE]) => $this->functionCall($token),
            default => null,
        };
        if ($call !== null) {
            $this->calls[$key][] = $call;
        }
    }

    /** @return list<string>|null `new Name(` or `new Name;`: its constructor */
    private function newCall(): ?array
    {
        $name = $this->peek();
        if ($name === null || !$name->is([\T_STRING, \T_NAME_QUALIFIED, \T_NAME_FULLY_QUALIFIED, \T_NAME_RELATIVE, \T_STATIC])) {
            return null;
        }

        return $this->classCall($name, '__construct');
    }

    /** @return list<string>|null `X::m(` */
    private function staticCall(): ?array
    {
        $receiver = $this->peek(-1);
        $method = $this->peek();
        if ($receiver === null || !self::isName($method) || $this->peek(2)?->text !== '(') {
            return null;
        }
        if ($receiver->is(\T_VARIABLE) || $receiver->text === ')' || $receiver->text === ']') {
            return ['name', \strtolower($method->text)];
        }
        if (!$receiver->is([\T_STRING, \T_NAME_QUALIFIED, \T_NAME_FULLY_QUALIFIED, \T_NAME_RELATIVE, \T_STATIC])) {
            return null;
        }

        return $this->classCall($receiver, $method->text);
    }

    /** @return list<string>|null `$this->m(`: the class's; `$x->m(`: by name */
    private function methodCall(): ?array
    {
        $method = $this->peek();
        if (!self::isName($method) || $this->peek(2)?->text !== '(') {
            return null;
        }
        $receiver = $this->peek(-1);
        $class = \end($this->classes);
        $beforeReceiver = $this->peek(-2);
        if ($receiver?->text === '$this' && $class !== false && $class[0] !== null
            && ($beforeReceiver === null || !$beforeReceiver->is([\T_OBJECT_OPERATOR, \T_NULLSAFE_OBJECT_OPERATOR, \T_DOUBLE_COLON]))) {
            return ['self', $class[0], \strtolower($method->text)];
        }

        return ['name', \strtolower($method->text)];
    }

    /**
     * A call of $method through a class name token (`self`, `static`,
     * `parent` or a name).
     *
     * @return list<string>|null
     */
    private function classCall(\PhpToken $name, string $method): ?array
    {
        $method = \strtolower($method);
        $class = \end($this->classes);
        $current = $class !== false ? $class[0] : null;
        $lower = \strtolower($name->text);
        if ($lower === 'self' || $lower === 'static') {
            return $current !== null ? ['self', $current, $method] : null;
        }
        if ($lower === 'parent') {
            return $current !== null ? ['parent', $current, $method] : null;
        }

        return ['class', \strtolower($this->resolveClass($name->text, $name->line)), $method];
    }

    /** @return list<string>|null `name(`: the function, namespaced first, then global */
    private function functionCall(\PhpToken $token): ?array
    {
        $previous = $this->peek(-1);
        if ($this->peek()?->text !== '(' || ($previous !== null && $previous->is([\T_OBJECT_OPERATOR, \T_NULLSAFE_OBJECT_OPERATOR, \T_DOUBLE_COLON, \T_FUNCTION, \T_NEW, \T_CONST]))) {
            return null;
        }
        if (!$token->is(\T_STRING)) {
            return ['function', \strtolower($this->resolveClass($token->text, $token->line))];
        }
        $lower = \strtolower($token->text);
        if (isset($this->functionImports[$lower])) {
            return ['function', $this->functionImports[$lower]];
        }
        [$namespace] = SourceFile::at($this->file)->scopeAt($token->line);

        return ['function', \strtolower(self::qualify($namespace, $token->text)), $lower];
    }

    /** A token outside every class and function: whether the file runs code. */
    private function topLevel(\PhpToken $token): void
    {
        if ($token->is(self::RUNNING_TOKENS)) {
            $this->runs[$this->file] = true;
        } elseif ($token->is([\T_STRING, \T_NAME_QUALIFIED, \T_NAME_FULLY_QUALIFIED]) && $this->peek()?->text === '('
            && !$this->peek(-1)?->is([\T_FUNCTION, \T_DECLARE]) && !\in_array(\strtolower($token->text), self::DECLARING_CALLS, true)) {
            $this->runs[$this->file] = true;
        }
    }

    private function resolveClass(string $name, int $line): string
    {
        [$namespace, $uses] = SourceFile::at($this->file)->scopeAt($line);

        return SourceFile::resolve($name, $namespace, $uses);
    }

    /**
     * Whether $token is an identifier: PHP's tokenizer (unlike its parser)
     * reads a method named `namespace`, `use` or `list` as the keyword.
     */
    private static function isName(?\PhpToken $token): bool
    {
        return $token !== null && \preg_match('/^[A-Za-z_\x80-\xff][A-Za-z0-9_\x80-\xff]*$/D', $token->text) === 1;
    }

    private static function qualify(string $namespace, string $name): string
    {
        return $namespace === '' ? $name : $namespace . '\\' . $name;
    }
}
