<?php declare(strict_types=1);

namespace PhpFuzz\Arguments;

/**
 * Where a PHPDoc type is written: the namespace and `use` imports of its
 * file at that line (read with the tokenizer), the class `self`, `static`
 * and `$this` mean, the `@template` names in scope, and the folders to look
 * for implementations in.
 *
 * @internal php-fuzz's own, not an API
 */
final class NameContext
{
    /**
     * @param array<string, string> $uses lower-case alias => class
     * @param array<string, object|null> $templates name => bound (a TypeNode) or null
     * @param list<string> $roots
     */
    public function __construct(
        public readonly string $namespace,
        public readonly array $uses,
        public readonly ?string $self,
        public readonly array $templates,
        public readonly array $roots,
    ) {
    }

    /**
     * The context of $function's doc comment.
     *
     * @param list<string> $roots
     */
    public static function of(\ReflectionFunctionAbstract $function, array $roots): self
    {
        $class = $function instanceof \ReflectionMethod ? $function->getDeclaringClass() : null;
        $file = $function->getFileName();
        [$namespace, $uses] = $file !== false && \is_file($file)
            ? SourceFile::at($file)->scopeAt((int) $function->getStartLine())
            : [$class?->getNamespaceName() ?? $function->getNamespaceName(), []];
        $templates = DocTypes::templates($function->getDocComment());
        if ($class !== null) {
            $templates += DocTypes::templates($class->getDocComment());
        }

        return new self($namespace, $uses, $class?->getName(), $templates, $roots);
    }

    /** A class name as written here, fully qualified (`self`, `static`: the class; `parent`: its parent). */
    public function resolve(string $name): ?string
    {
        return match (\strtolower($name)) {
            'self', 'static', '$this' => $this->self,
            'parent' => $this->parent(),
            default => SourceFile::resolve($name, $this->namespace, $this->uses),
        };
    }

    private function parent(): ?string
    {
        if ($this->self === null) {
            return null;
        }
        $parent = (new \ReflectionClass($this->self))->getParentClass();

        return $parent === false ? null : $parent->getName();
    }
}
