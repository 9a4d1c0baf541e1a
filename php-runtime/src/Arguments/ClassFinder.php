<?php declare(strict_types=1);

namespace PhpFuzz\Arguments;

/**
 * Finds the classes a type can be, without loading a package blindly: the
 * files of a namespace's root folder (and of Composer's class map) are read
 * with the tokenizer, and only the classes whose declared parents may lead
 * to the type are loaded, through the autoloader.
 *
 * @internal php-fuzz's own, not an API
 */
final class ClassFinder
{
    /** The most files read under one folder. */
    public const MAX_FILES = 3000;

    /** @var array<string, list<string>> the PHP files under a folder */
    private static array $files = [];
    /** @var array<string, list<string>> implementationsOf() answers */
    private static array $implementations = [];

    /**
     * The concrete classes and enums the autoloader can reach that extend or
     * implement $type (itself left out), sorted: those declared so far,
     * those in the files of $type's namespace root folder and of Composer's
     * class map in its first namespace segment, and those under the folders
     * $alsoIn. Built-in classes are left out.
     *
     * @param list<string> $alsoIn more folders to look in
     * @return list<string>
     */
    public static function implementationsOf(string $type, array $alsoIn = []): array
    {
        $type = \ltrim($type, '\\');
        $key = \strtolower($type) . "\0" . \implode("\0", $alsoIn);
        if (!isset(self::$implementations[$key])) {
            self::$implementations[$key] = self::find($type, $alsoIn);
        }

        return self::$implementations[$key];
    }

    /**
     * The classes, interfaces and enums declared in the PHP files under
     * $dir (read with the tokenizer, not loaded), sorted.
     *
     * @return list<string>
     */
    public static function classesIn(string $dir): array
    {
        return self::namesIn($dir, ['class', 'interface', 'enum']);
    }

    /**
     * The functions declared in the PHP files under $dir, sorted.
     *
     * @return list<string>
     */
    public static function functionsIn(string $dir): array
    {
        return self::namesIn($dir, ['function']);
    }

    /**
     * Everything the PHP files under $dir declare (at most MAX_FILES files,
     * in path order; `vendor`, `node_modules` and dot folders skipped).
     *
     * @return list<array{name: string, kind: string, abstract: bool, parents: list<string>, file: string, line: int}>
     */
    public static function declarationsIn(string $dir): array
    {
        $declarations = [];
        foreach (self::filesIn($dir) as $file) {
            \array_push($declarations, ...SourceFile::at($file)->declarations());
        }

        return $declarations;
    }

    /**
     * The root folder of $name's namespace, $name declared in $file: the
     * file's folder, climbed once per trailing namespace segment the folders
     * repeat (`A\B\C` in `/x/src/B/C.php`: `/x/src`; PSR-4's source folder).
     */
    public static function rootOf(string $name, string $file): string
    {
        $segments = \explode('\\', \ltrim($name, '\\'));
        \array_pop($segments);
        $dir = \dirname($file);
        while (\count($segments) > 1 && \strcasecmp(\basename($dir), (string) \end($segments)) === 0) {
            \array_pop($segments);
            $dir = \dirname($dir);
        }

        return $dir;
    }

    /** rootOf() a class, or null for a built-in class or an unknown one. */
    public static function rootOfClass(string $class): ?string
    {
        if (!self::exists($class)) {
            return null;
        }
        $file = (new \ReflectionClass($class))->getFileName();

        return $file === false ? null : self::rootOf($class, $file);
    }

    /** Whether $class is a class, interface or enum (autoloaded); an autoloader's exception is a no. */
    public static function exists(string $class): bool
    {
        try {
            return \class_exists($class) || \interface_exists($class);
        } catch (\Throwable) {
            return false;
        }
    }

    /**
     * @param list<string> $kinds
     * @return list<string>
     */
    private static function namesIn(string $dir, array $kinds): array
    {
        $names = [];
        foreach (self::declarationsIn($dir) as $declaration) {
            if (\in_array($declaration['kind'], $kinds, true)) {
                $names[$declaration['name']] = true;
            }
        }
        $names = \array_keys($names);
        \sort($names, \SORT_STRING);

        return $names;
    }

    /**
     * @param list<string> $alsoIn
     * @return list<string>
     */
    private static function find(string $type, array $alsoIn): array
    {
        if (!self::exists($type)) {
            return [];
        }
        $reflection = new \ReflectionClass($type);
        $type = $reflection->getName();
        $roots = $alsoIn;
        if ($reflection->getFileName() !== false) {
            $roots[] = self::rootOf($type, $reflection->getFileName());
        }
        $found = [];
        foreach (self::candidates($type, $roots, !$reflection->isInternal()) as $class) {
            if (self::implementsIt($class, $type)) {
                $found[$class] = true;
            }
        }
        $found = \array_keys($found);
        \sort($found, \SORT_STRING);

        return $found;
    }

    /**
     * The names that may implement $type: the declared classes (for a
     * built-in type, only those under $roots) and the classes under $roots
     * and in the class map whose parents may lead to $type.
     *
     * @param list<string> $roots
     * @return list<string>
     */
    private static function candidates(string $type, array $roots, bool $anyDeclared): array
    {
        $files = [];
        foreach (\array_unique($roots) as $root) {
            \array_push($files, ...self::filesIn($root));
        }
        \array_push($files, ...self::classMapFiles($type));
        $graph = self::graph(\array_unique($files));
        $candidates = [];
        foreach ($graph as $declaration) {
            if (self::mayLeadTo($declaration, \strtolower($type), $graph, [])) {
                $candidates[] = $declaration['name'];
            }
        }
        foreach (\get_declared_classes() as $class) {
            if ($anyDeclared || isset($graph[\strtolower($class)])) {
                $candidates[] = $class;
            }
        }

        return $candidates;
    }

    /**
     * The classes and enums declared in $files, by lower-case name.
     *
     * @param list<string> $files
     * @return array<string, array{name: string, kind: string, abstract: bool, parents: list<string>, file: string, line: int}>
     */
    private static function graph(array $files): array
    {
        $graph = [];
        foreach ($files as $file) {
            foreach (SourceFile::at($file)->declarations() as $declaration) {
                if ($declaration['kind'] !== 'function' && $declaration['kind'] !== 'trait') {
                    $graph[\strtolower($declaration['name'])] ??= $declaration;
                }
            }
        }

        return $graph;
    }

    /**
     * Whether a concrete class or enum's declared parents reach $type
     * (lower case), or reach a class outside the graph that is a $type.
     *
     * @param array<string, array{name: string, kind: string, abstract: bool, parents: list<string>, file: string, line: int}> $graph
     * @param array<string, true> $seen
     */
    private static function mayLeadTo(array $declaration, string $type, array $graph, array $seen): bool
    {
        if ($seen === [] && ($declaration['abstract'] || !\in_array($declaration['kind'], ['class', 'enum'], true))) {
            return false;
        }
        foreach ($declaration['parents'] as $parent) {
            $lower = \strtolower($parent);
            if ($lower === $type) {
                return true;
            }
            if (isset($seen[$lower])) {
                continue;
            }
            $leads = isset($graph[$lower])
                ? self::mayLeadTo($graph[$lower], $type, $graph, $seen + [$lower => true])
                : self::exists($parent) && \is_a($parent, $type, true);
            if ($leads) {
                return true;
            }
        }

        return false;
    }

    private static function implementsIt(string $class, string $type): bool
    {
        if (!self::exists($class) || !\is_subclass_of($class, $type, true)) {
            return false;
        }
        $reflection = new \ReflectionClass($class);

        return !$reflection->isAbstract() && !$reflection->isInterface() && !$reflection->isInternal()
            && !$reflection->isAnonymous() && !self::isOwn($reflection->getName());
    }

    /** php-fuzz's own classes and its PHPDoc parser's, never candidates. */
    private static function isOwn(string $class): bool
    {
        foreach (['PhpFuzz\\', 'PhpFuzzer\\', 'PHPStan\\PhpDocParser\\'] as $prefix) {
            if (\strncmp($class, $prefix, \strlen($prefix)) === 0) {
                return true;
            }
        }

        return false;
    }

    /**
     * The files Composer's class maps give for classes in $type's first
     * namespace segment.
     *
     * @return list<string>
     */
    private static function classMapFiles(string $type): array
    {
        $loader = 'Composer\\Autoload\\ClassLoader';
        $segment = \strstr($type, '\\', true);
        if ($segment === false || !\class_exists($loader, false) || !\method_exists($loader, 'getRegisteredLoaders')) {
            return [];
        }
        $files = [];
        foreach ($loader::getRegisteredLoaders() as $registered) {
            foreach ($registered->getClassMap() as $class => $file) {
                if (\strncasecmp($class, $segment . '\\', \strlen($segment) + 1) === 0 && \count($files) < self::MAX_FILES) {
                    $files[] = (string) (\realpath($file) ?: $file);
                }
            }
        }

        return $files;
    }

    /** @return list<string> */
    private static function filesIn(string $dir): array
    {
        $dir = \rtrim($dir, '/');
        if (!isset(self::$files[$dir])) {
            $files = [];
            self::collect($dir, $files);
            self::$files[$dir] = $files;
        }

        return self::$files[$dir];
    }

    /** @param list<string> $files */
    private static function collect(string $dir, array &$files): void
    {
        $entries = \is_dir($dir) ? (@\scandir($dir) ?: []) : [];
        foreach ($entries as $entry) {
            if (\count($files) >= self::MAX_FILES) {
                return;
            }
            $path = $dir . '/' . $entry;
            if ($entry[0] === '.' || $entry === 'vendor' || $entry === 'node_modules') {
                continue;
            }
            if (\is_dir($path) && !\is_link($path)) {
                self::collect($path, $files);
            } elseif (\str_ends_with($entry, '.php') && \is_file($path)) {
                $files[] = $path;
            }
        }
    }
}
