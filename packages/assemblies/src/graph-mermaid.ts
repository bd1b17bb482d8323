import type { CompiledGraph } from './graph-definition.js';

/**
 * Draws a graph as a Mermaid `flowchart TD`: a start marker, its nodes (finish nodes with a
 * double border), edges (conditional ones labelled) and error edges (dashed, labelled `error`).
 */
export function graphToMermaid(graph: CompiledGraph): string {
  // Node names may hold any character, so Mermaid ids are positional and names are quoted labels.
  const ids = new Map([...graph.nodes.keys()].map((node, index) => [node, `n${index}`]));
  const id = (node: string) => ids.get(node) as string;
  const lines = ['flowchart TD', '  start(((start)))'];
  for (const node of graph.nodes.keys()) {
    const label = quote(node);
    lines.push(graph.finish.has(node) ? `  ${id(node)}[["${label}"]]` : `  ${id(node)}["${label}"]`);
  }
  lines.push(`  start --> ${id(graph.start)}`);
  for (const edge of graph.edges) {
    const label = edge.label ?? (edge.when ? 'when' : undefined);
    lines.push(
      label === undefined
        ? `  ${id(edge.from)} --> ${id(edge.to)}`
        : `  ${id(edge.from)} -->|"${quote(label)}"| ${id(edge.to)}`,
    );
  }
  for (const edge of graph.errorEdges) lines.push(`  ${id(edge.from)} -. error .-> ${id(edge.to)}`);
  return lines.join('\n');
}

function quote(text: string): string {
  return text.replaceAll('"', '#quot;').replaceAll('\n', ' ');
}
