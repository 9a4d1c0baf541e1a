<?php declare(strict_types=1);

namespace PhpFuzz\PHPUnit;

/**
 * Loads a test file as phpunit would, for php-fuzz: the `bootstrap` of the
 * nearest phpunit.xml or phpunit.xml.dist, else the nearest
 * vendor/autoload.php above the test file; then PHPUnit itself, from the
 * project or from PHP's include path (Debian's phpunit). Also says which
 * folders hold PHPUnit's and php-fuzz's own code, which php-fuzz never
 * instruments.
 *
 * @internal php-fuzz's PHPUnit integration, not an API
 */
final class Bootstrap
{
    /** Namespaces of the test framework and its helpers: never instrumented. */
    private const FRAMEWORK_NAMESPACES = ['PHPUnit\\', 'SebastianBergmann\\', 'PharIo\\', 'TheSeer\\Tokenizer\\',
        'DeepCopy\\', 'Doctrine\\Instantiator\\', 'Prophecy\\', 'PhpFuzz\\', 'PhpFuzzer\\'];

    /** @return array{config: ?string, bootstrap: ?string, error_reporting: ?int} */
    public static function find(string $testFile): array
    {
        $config = null;
        for ($dir = \dirname($testFile); ; $dir = \dirname($dir)) {
            foreach (['phpunit.xml', 'phpunit.xml.dist'] as $name) {
                if ($config === null && \is_file("$dir/$name")) {
                    $config = "$dir/$name";
                }
            }
            if ($config !== null || \dirname($dir) === $dir) {
                break;
            }
        }
        $bootstrap = $config !== null ? self::configuredBootstrap($config) : null;
        if ($bootstrap === null) {
            for ($dir = \dirname($testFile); ; $dir = \dirname($dir)) {
                if (\is_file("$dir/vendor/autoload.php")) {
                    $bootstrap = "$dir/vendor/autoload.php";
                    break;
                }
                if (\dirname($dir) === $dir) {
                    break;
                }
            }
        }

        return ['config' => $config, 'bootstrap' => $bootstrap,
            'error_reporting' => $config !== null ? self::configuredErrorReporting($config) : null];
    }

    /** Requires the bootstrap, then PHPUnit if the bootstrap did not bring it. */
    public static function load(?string $bootstrap): void
    {
        if ($bootstrap !== null) {
            (static function (string $file): void {
                require_once $file;
            })($bootstrap);
        }
        if (!\class_exists(\PHPUnit\Framework\TestCase::class)) {
            // Debian's phpunit package puts PHPUnit/Autoload.php on the include path.
            $autoload = \stream_resolve_include_path('PHPUnit/Autoload.php')
                ?: \stream_resolve_include_path('PHPUnit/autoload.php');
            if ($autoload === false) {
                throw new \RuntimeException('PHPUnit is not installed for this project: '
                    . ($bootstrap === null ? 'no bootstrap or vendor/autoload.php was found, and ' : "$bootstrap did not load it, and ")
                    . 'PHP\'s include path has no PHPUnit/Autoload.php (run `composer require --dev phpunit/phpunit`)');
            }
            require_once $autoload;
        }
    }

    /**
     * Folders of the classes loaded so far from the framework namespaces: a
     * composer package's folder, or the namespace's root folder.
     *
     * @return list<string> each ending in '/'
     */
    public static function frameworkFolders(): array
    {
        $folders = [];
        foreach (\array_merge(\get_declared_classes(), \get_declared_traits(), \get_declared_interfaces()) as $name) {
            if (!self::isFramework($name)) {
                continue;
            }
            $file = (new \ReflectionClass($name))->getFileName();
            if ($file !== false) {
                $folders[self::packageFolder($name, $file)] = true;
            }
        }

        return \array_keys($folders);
    }

    private static function isFramework(string $name): bool
    {
        foreach (self::FRAMEWORK_NAMESPACES as $namespace) {
            if (\str_starts_with($name, $namespace)) {
                return true;
            }
        }

        return false;
    }

    private static function packageFolder(string $class, string $file): string
    {
        if (\preg_match('{^(.*/vendor/[^/]+/[^/]+/)}', $file, $m)) {
            return $m[1];
        }
        $suffix = \str_replace('\\', '/', $class) . '.php';
        if (\str_ends_with($file, '/' . $suffix)) {
            $root = \substr($file, 0, -\strlen($suffix));
            $first = \strstr($suffix, '/', true);

            return $root . ($first === false ? '' : $first . '/');
        }

        return \dirname($file) . '/';
    }

    /** `<php><ini name="error_reporting" value="…"/>`, read as phpunit reads it (a number or a constant). */
    private static function configuredErrorReporting(string $config): ?int
    {
        if (!\class_exists(\DOMXPath::class)) {
            return null;
        }
        $document = new \DOMDocument();
        if (!@$document->load($config)) {
            return null;
        }
        $value = null;
        foreach ((new \DOMXPath($document))->query('/phpunit/php/ini[@name="error_reporting"]') ?: [] as $ini) {
            $value = $ini instanceof \DOMElement ? $ini->getAttribute('value') : null;
        }
        if ($value !== null && \defined($value)) {
            $value = (string) \constant($value);
        }

        return $value !== null && \is_numeric($value) ? (int) $value : null;
    }

    private static function configuredBootstrap(string $config): ?string
    {
        $path = null;
        if (\class_exists(\DOMDocument::class)) {
            $document = new \DOMDocument();
            if (@$document->load($config) && $document->documentElement?->hasAttribute('bootstrap')) {
                $path = $document->documentElement->getAttribute('bootstrap');
            }
        } elseif (\preg_match('{<phpunit\b[^>]*\sbootstrap\s*=\s*(["\'])(.*?)\1}s', (string) @\file_get_contents($config), $m)) {
            $path = \html_entity_decode($m[2], \ENT_QUOTES | \ENT_XML1); // PHPUnit itself needs ext-dom; this is for probing only
        }
        if ($path === null || $path === '') {
            return null;
        }
        $path = $path[0] === '/' ? $path : \dirname($config) . '/' . $path;

        return \realpath($path) ?: $path;
    }
}
