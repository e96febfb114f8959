// The top-level property names of an official SDK's request type, read from its .d.ts with the TypeScript compiler API.
import { join } from 'node:path';
import ts from 'typescript';

const nodeModules = join(import.meta.dirname, '..', '..', 'node_modules');

/** Every property of `typeName` (inherited ones included) declared in `module`'s type definitions, e.g. ('openai/resources/chat/completions/completions', 'ChatCompletionCreateParamsBase'). */
export function sdkRequestFields(module: string, typeName: string): string[] {
  const file = join(nodeModules, `${module}.d.ts`);
  const program = ts.createProgram([file], { noEmit: true, skipLibCheck: true, moduleResolution: ts.ModuleResolutionKind.Bundler, module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file);
  if (!source) throw new Error(`no type definitions at ${file}`);
  let found: ts.Node | undefined;
  const visit = (node: ts.Node) => {
    if ((ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node)) && node.name.text === typeName) found = node;
    else ts.forEachChild(node, visit);
  };
  visit(source);
  if (!found) throw new Error(`${module} declares no type ${typeName}`);
  const type = checker.getTypeAtLocation((found as ts.InterfaceDeclaration).name);
  return checker.getPropertiesOfType(type).map((p) => p.getName()).sort();
}
