/**
 * The arguments that let a child Node.js process (the same binary as this one) load TypeScript
 * sources: none where Node.js strips types itself (22.18 and newer), tsx's loader elsewhere.
 */
export const tsLoader: readonly string[] = (process.features as { typescript?: string | false }).typescript ? [] : ['--import', 'tsx'];
