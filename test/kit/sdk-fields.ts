// The top-level body properties of the official SDKs' request types, read from their .d.ts with the TypeScript compiler API.
import { join } from 'node:path';
import ts from 'typescript';

const nodeModules = join(import.meta.dirname, '..', '..', 'node_modules');

export interface SdkType {
  /** Path of the type definitions under node_modules, without `.d.ts` (`openai/resources/chat/completions/completions`). */
  module: string;
  /** The interface or type alias (`ChatCompletionCreateParamsBase`). */
  name: string;
}

/**
 * Every property of each type (inherited ones included), sorted, by type name; properties the SDK sends as headers
 * (documented "Header param:") are left out, since they never reach the body. One program reads every file.
 */
export function sdkRequestFields(types: SdkType[]): Record<string, string[]> {
  const files = types.map((t) => join(nodeModules, `${t.module}.d.ts`));
  const program = ts.createProgram(files, { noEmit: true, skipLibCheck: true, types: [], moduleResolution: ts.ModuleResolutionKind.Bundler, module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 });
  const checker = program.getTypeChecker();
  const out: Record<string, string[]> = {};
  types.forEach((t, i) => {
    const source = program.getSourceFile(files[i]);
    if (!source) throw new Error(`no type definitions at ${files[i]}`);
    let found: ts.InterfaceDeclaration | ts.TypeAliasDeclaration | undefined;
    const visit = (node: ts.Node) => {
      if ((ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node)) && node.name.text === t.name) found = node;
      else if (!found) ts.forEachChild(node, visit);
    };
    visit(source);
    if (!found) throw new Error(`${t.module} declares no type ${t.name}`);
    const properties = checker.getPropertiesOfType(checker.getTypeAtLocation(found.name));
    out[t.name] = properties
      .filter((p) => !ts.displayPartsToString(p.getDocumentationComment(checker)).startsWith('Header param'))
      .map((p) => p.getName())
      .sort();
  });
  return out;
}
