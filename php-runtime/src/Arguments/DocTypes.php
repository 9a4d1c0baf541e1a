<?php declare(strict_types=1);

namespace PhpFuzz\Arguments;

use PHPStan\PhpDocParser\Ast\PhpDoc\PhpDocNode;
use PHPStan\PhpDocParser\Ast\Type\TypeNode;

/**
 * PHPDoc read with phpstan/phpdoc-parser (1.x or 2.x): the project's copy
 * if its autoloader has one, else the system's (Debian's php-phpstan-phpdoc-parser),
 * else none: PHPDoc types are then ignored (unavailable() says so) and only
 * the `@internal` tag is still found.
 *
 * @internal php-fuzz's own, not an API
 */
final class DocTypes
{
    private const SYSTEM_AUTOLOAD = '/usr/share/php/PHPStan/PhpDocParser/autoload.php';
    private const PARSER = 'PHPStan\\PhpDocParser\\Parser\\PhpDocParser';

    /** @var array{object, object}|null the lexer and the PHPDoc parser */
    private static ?array $parser = null;
    private static bool $loaded = false;
    private static ?string $folder = null;
    /** @var array<string, PhpDocNode|null> by doc comment */
    private static array $parsed = [];

    /** Why PHPDoc types are ignored, one line, or null when they are read. */
    public static function unavailable(): ?string
    {
        return self::load() ? null
            : 'PHPDoc types ignored: phpstan/phpdoc-parser is not installed (composer require --dev phpstan/phpdoc-parser)';
    }

    /** The folder (ending in '/') the parser's classes come from, never to instrument; null without it. */
    public static function libraryFolder(): ?string
    {
        self::load();

        return self::$folder;
    }

    /**
     * The parsed doc comment, or null (none, no parser, or not PHPDoc).
     */
    public static function parse(string|false|null $doc): ?PhpDocNode
    {
        if (!\is_string($doc) || $doc === '' || !self::load()) {
            return null;
        }
        if (!\array_key_exists($doc, self::$parsed)) {
            self::$parsed[$doc] = self::parseNow($doc);
        }

        return self::$parsed[$doc];
    }

    /**
     * The PHPDoc type of each parameter, by name without `$`: `@param`,
     * overridden by `@psalm-param`, overridden by `@phpstan-param`.
     *
     * @return array<string, TypeNode>
     */
    public static function params(string|false|null $doc): array
    {
        $types = [];
        foreach (['@param', '@psalm-param', '@phpstan-param'] as $tag) {
            foreach (self::parse($doc)?->getParamTagValues($tag) ?? [] as $value) {
                $types[\ltrim($value->parameterName, '$')] = $value->type;
            }
        }

        return $types;
    }

    /** A property's `@var` type (prefixed tags win), or null. */
    public static function var(string|false|null $doc): ?TypeNode
    {
        $type = null;
        foreach (['@var', '@psalm-var', '@phpstan-var'] as $tag) {
            foreach (self::parse($doc)?->getVarTagValues($tag) ?? [] as $value) {
                $type = $value->type;
            }
        }

        return $type;
    }

    /**
     * The types of the `@throws` tags.
     *
     * @return list<TypeNode>
     */
    public static function throws(string|false|null $doc): array
    {
        $types = [];
        foreach (self::parse($doc)?->getThrowsTagValues('@throws') ?? [] as $value) {
            $types[] = $value->type;
        }

        return $types;
    }

    /**
     * The `@template` names with their bounds (null: none).
     *
     * @return array<string, TypeNode|null>
     */
    public static function templates(string|false|null $doc): array
    {
        $templates = [];
        foreach (['', '-covariant', '-contravariant'] as $variance) {
            foreach (['@template', '@psalm-template', '@phpstan-template'] as $tag) {
                foreach (self::parse($doc)?->getTemplateTagValues($tag . $variance) ?? [] as $value) {
                    $templates[$value->name] = $value->bound;
                }
            }
        }

        return $templates;
    }

    /** Whether the doc comment has an `@internal` tag (found even without the parser). */
    public static function isInternal(string|false|null $doc): bool
    {
        if (!\is_string($doc) || !\str_contains($doc, '@internal')) {
            return false;
        }
        $node = self::parse($doc);
        if ($node !== null) {
            return $node->getTagsByName('@internal') !== [];
        }
        foreach (\explode("\n", $doc) as $line) {
            $line = \ltrim($line, " \t/*");
            if (\str_starts_with($line, '@internal') && \in_array(\substr($line, 9, 1), ['', ' ', "\t", "\r"], true)) {
                return true;
            }
        }

        return false;
    }

    private static function load(): bool
    {
        if (!self::$loaded) {
            self::$loaded = true;
            if (!self::autoloadable() && \is_file(self::SYSTEM_AUTOLOAD)) {
                require_once self::SYSTEM_AUTOLOAD;
            }
            if (self::autoloadable()) {
                self::$parser = self::build();
                $file = (string) (new \ReflectionClass(self::PARSER))->getFileName();
                self::$folder = \dirname($file, 2) . '/';
            }
        }

        return self::$parser !== null;
    }

    private static function autoloadable(): bool
    {
        try {
            return \class_exists(self::PARSER);
        } catch (\Throwable) {
            return false;
        }
    }

    /** @return array{object, object} the lexer and the PHPDoc parser, 2.x's way or 1.x's */
    private static function build(): array
    {
        $ns = 'PHPStan\\PhpDocParser\\';
        $lexer = $ns . 'Lexer\\Lexer';
        $constExprParser = $ns . 'Parser\\ConstExprParser';
        $typeParser = $ns . 'Parser\\TypeParser';
        $phpDocParser = self::PARSER;
        if (\class_exists($ns . 'ParserConfig')) {
            $config = new ($ns . 'ParserConfig')([]);
            $constExpr = new $constExprParser($config);

            return [new $lexer($config), new $phpDocParser($config, new $typeParser($config, $constExpr), $constExpr)];
        }
        $constExpr = new $constExprParser(true);

        return [new $lexer(), new $phpDocParser(new $typeParser($constExpr), $constExpr)];
    }

    private static function parseNow(string $doc): ?PhpDocNode
    {
        [$lexer, $parser] = self::$parser;
        try {
            $iterator = 'PHPStan\\PhpDocParser\\Parser\\TokenIterator';

            return $parser->parse(new $iterator($lexer->tokenize($doc)));
        } catch (\Throwable) {
            return null;
        }
    }
}
