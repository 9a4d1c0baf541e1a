<?php declare(strict_types=1);

namespace PhpFuzz\Arguments;

/**
 * What PHP's own tokenizer reads in one PHP file, without including it:
 * its namespaces with their `use` imports (to resolve the names PHPDoc
 * writes) and the classes, interfaces, traits, enums and functions it
 * declares, with the names they extend and implement. Read once per file.
 *
 * @internal php-fuzz's own, not an API
 */
final class SourceFile
{
    /** @var array<string, SourceFile> by path */
    private static array $files = [];

    /**
     * Namespace blocks in file order: the first line, the namespace, and the
     * class imports (lower-case alias => name).
     *
     * @var list<array{line: int, namespace: string, uses: array<string, string>}>
     */
    private array $blocks = [['line' => 0, 'namespace' => '', 'uses' => []]];

    /**
     * @var list<array{name: string, kind: string, abstract: bool, parents: list<string>, file: string, line: int}>
     */
    private array $declarations = [];

    /** @var list<\PhpToken> the tokens that are not whitespace or comments */
    private array $tokens = [];
    private int $i = 0;
    private int $depth = 0;
    /** the brace depth of the current namespace's code (1 inside `namespace X { }`) */
    private int $namespaceDepth = 0;

    private function __construct(private readonly string $path)
    {
    }

    /** The file at $path, read once (an unreadable file declares nothing). */
    public static function at(string $path): self
    {
        if (!isset(self::$files[$path])) {
            $file = new self($path);
            $code = \is_file($path) ? \file_get_contents($path) : false;
            if (\is_string($code) && \str_contains($code, '<?')) {
                $file->read($code);
            }
            self::$files[$path] = $file;
        }

        return self::$files[$path];
    }

    /**
     * The namespace in effect at $line and its class imports.
     *
     * @return array{string, array<string, string>} the namespace and the imports (lower-case alias => name)
     */
    public function scopeAt(int $line): array
    {
        $scope = $this->blocks[0];
        foreach ($this->blocks as $block) {
            if ($block['line'] <= $line) {
                $scope = $block;
            }
        }

        return [$scope['namespace'], $scope['uses']];
    }

    /**
     * The classes, interfaces, traits, enums (kind 'class', 'interface',
     * 'trait', 'enum') and functions (kind 'function') the file declares.
     *
     * @return list<array{name: string, kind: string, abstract: bool, parents: list<string>, file: string, line: int}>
     */
    public function declarations(): array
    {
        return $this->declarations;
    }

    /** $name as PHP resolves a class name written in $namespace with $uses. */
    public static function resolve(string $name, string $namespace, array $uses): string
    {
        if ($name !== '' && $name[0] === '\\') {
            return \substr($name, 1);
        }
        if (\strncasecmp($name, 'namespace\\', 10) === 0) {
            return self::qualify($namespace, \substr($name, 10));
        }
        $parts = \explode('\\', $name, 2);
        $alias = $uses[\strtolower($parts[0])] ?? null;
        if ($alias !== null) {
            return isset($parts[1]) ? $alias . '\\' . $parts[1] : $alias;
        }

        return self::qualify($namespace, $name);
    }

    private static function qualify(string $namespace, string $name): string
    {
        return $namespace === '' ? $name : $namespace . '\\' . $name;
    }

    private function read(string $code): void
    {
        foreach (\PhpToken::tokenize($code) as $token) {
            if (!$token->is([\T_WHITESPACE, \T_COMMENT, \T_DOC_COMMENT, \T_INLINE_HTML])) {
                $this->tokens[] = $token;
            }
        }
        for ($this->i = 0; $this->i < \count($this->tokens); $this->i++) {
            $this->step($this->tokens[$this->i]);
        }
    }

    private function step(\PhpToken $token): void
    {
        if ($token->text === '{' || $token->is([\T_CURLY_OPEN, \T_DOLLAR_OPEN_CURLY_BRACES])) {
            $this->depth++;
        } elseif ($token->text === '}') {
            $this->depth--;
        } elseif ($token->is(\T_NAMESPACE) && $this->atStatementStart()) {
            // Not a method named `namespace` (`function namespace(`, `->namespace(`).
            $this->namespaceStatement($token->line);
        } elseif ($token->is(\T_USE) && $this->depth === $this->namespaceDepth && $this->atStatementStart()) {
            $this->useStatement();
        } elseif ($token->is([\T_CLASS, \T_INTERFACE, \T_TRAIT, \T_ENUM])) {
            $this->classDeclaration($token);
        } elseif ($token->is(\T_FUNCTION) && $this->depth === $this->namespaceDepth) {
            $this->functionDeclaration($token->line);
        }
    }

    private function peek(int $offset = 1): ?\PhpToken
    {
        return $this->tokens[$this->i + $offset] ?? null;
    }

    private function atStatementStart(): bool
    {
        $previous = $this->peek(-1);

        return $previous === null || \in_array($previous->text, [';', '{', '}'], true) || $previous->is([\T_OPEN_TAG, \T_CLOSE_TAG]);
    }

    private function namespaceStatement(int $line): void
    {
        $name = '';
        while (($next = $this->peek()) !== null && $next->is([\T_STRING, \T_NAME_QUALIFIED])) {
            $name .= $next->text;
            $this->i++;
        }
        $braced = $this->peek()?->text === '{';
        $this->namespaceDepth = $braced ? $this->depth + 1 : $this->depth;
        $this->blocks[] = ['line' => $line, 'namespace' => $name, 'uses' => []];
    }

    /** `use A\B [as C], …;` and `use A\{B, C as D};`: the class imports only. */
    private function useStatement(): void
    {
        $this->i++;
        $kind = $this->importKind();
        while (($token = $this->peek(0)) !== null && $token->text !== ';' && !$token->is(\T_CLOSE_TAG)) {
            if ($token->is([\T_STRING, \T_NAME_QUALIFIED, \T_NAME_FULLY_QUALIFIED])) {
                $name = \ltrim($token->text, '\\');
                if ($this->peek()?->is(\T_NS_SEPARATOR) && $this->peek(2)?->text === '{') {
                    $this->i += 3;
                    $this->groupImports($name);
                    continue;
                }
                $this->i++;
                $this->import($kind, $name);
                continue;
            }
            $this->i++;
        }
    }

    private function importKind(): string
    {
        $token = $this->peek(0);
        if ($token !== null && $token->is([\T_FUNCTION, \T_CONST])) {
            $this->i++;

            return 'other';
        }

        return 'class';
    }

    /** The items of `use Prefix\{…}`, $this->i after the `{`. */
    private function groupImports(string $prefix): void
    {
        while (($token = $this->peek(0)) !== null && $token->text !== '}') {
            $kind = $this->importKind();
            $token = $this->peek(0);
            if ($token !== null && $token->is([\T_STRING, \T_NAME_QUALIFIED])) {
                $this->i++;
                $this->import($kind, $prefix . '\\' . $token->text);
                continue;
            }
            $this->i++;
        }
    }

    /** One import, $this->i after its name: reads `as Alias` if there is one. */
    private function import(string $kind, string $name): void
    {
        $alias = \substr($name, (int) \strrpos('\\' . $name, '\\'));
        if ($this->peek(0)?->is(\T_AS) && $this->peek()?->is(\T_STRING)) {
            $alias = $this->peek()->text;
            $this->i += 2;
        }
        if ($kind === 'class') {
            $this->blocks[\count($this->blocks) - 1]['uses'][\strtolower($alias)] = $name;
        }
    }

    private function classDeclaration(\PhpToken $keyword): void
    {
        $previous = $this->peek(-1);
        $name = $this->peek();
        if ($name === null || !$name->is(\T_STRING)
            || ($previous !== null && $previous->is([\T_NEW, \T_DOUBLE_COLON, \T_OBJECT_OPERATOR, \T_NULLSAFE_OBJECT_OPERATOR, \T_FUNCTION, \T_CONST]))) {
            return;
        }
        $abstract = $this->isAbstract();
        $this->i++;
        $parents = [];
        while (($token = $this->peek()) !== null && $token->text !== '{') {
            $this->i++;
            if ($token->is([\T_STRING, \T_NAME_QUALIFIED, \T_NAME_FULLY_QUALIFIED, \T_NAME_RELATIVE]) && $this->inParentList()) {
                $parents[] = $this->resolveHere($token->text);
            }
        }
        $this->declare($name->text, \strtolower($keyword->text), $abstract, $parents, $keyword->line);
    }

    /** Whether the token at $this->i follows `extends`, `implements` or a comma in their lists. */
    private function inParentList(): bool
    {
        for ($j = $this->i - 1; $j > 0; $j--) {
            $token = $this->tokens[$j];
            if ($token->is([\T_EXTENDS, \T_IMPLEMENTS])) {
                return true;
            }
            if ($token->text !== ',' && !$token->is([\T_STRING, \T_NAME_QUALIFIED, \T_NAME_FULLY_QUALIFIED, \T_NAME_RELATIVE])) {
                return false;
            }
        }

        return false;
    }

    private function isAbstract(): bool
    {
        for ($j = $this->i - 1; $j >= 0 && $j >= $this->i - 3; $j--) {
            if ($this->tokens[$j]->is(\T_ABSTRACT)) {
                return true;
            }
            if (!$this->tokens[$j]->is([\T_FINAL, \T_READONLY])) {
                return false;
            }
        }

        return false;
    }

    private function functionDeclaration(int $line): void
    {
        $next = $this->peek();
        if ($next !== null && $next->text === '&') {
            $next = $this->peek(2);
        }
        if ($next !== null && $next->is(\T_STRING) && $this->peek(-1)?->text !== '::') {
            $this->declare($next->text, 'function', false, [], $line);
        }
    }

    /** @param list<string> $parents */
    private function declare(string $shortName, string $kind, bool $abstract, array $parents, int $line): void
    {
        [$namespace] = $this->scopeAt(\PHP_INT_MAX);
        $this->declarations[] = [
            'name' => self::qualify($namespace, $shortName),
            'kind' => $kind,
            'abstract' => $abstract,
            'parents' => $parents,
            'file' => $this->path,
            'line' => $line,
        ];
    }

    private function resolveHere(string $name): string
    {
        [$namespace, $uses] = $this->scopeAt(\PHP_INT_MAX);

        return self::resolve($name, $namespace, $uses);
    }
}
