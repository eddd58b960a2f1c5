// The language model part of the fake `vscode` module: the part classes a provider sees and `lm`, which records
// the providers registered by vendor (what VS Code's Chat view and `vscode.lm.selectChatModels` would ask).
export class LanguageModelTextPart { constructor(readonly value: string) {} }
export class LanguageModelToolCallPart { constructor(readonly callId: string, readonly name: string, readonly input: object) {} }
export class LanguageModelToolResultPart { constructor(readonly callId: string, readonly content: unknown[]) {} }
export class LanguageModelPromptTsxPart { constructor(readonly value: unknown) {} }
export class CancellationError extends Error { override readonly name = 'Canceled'; }

export const lmEnums = {
  LanguageModelChatMessageRole: { User: 1, Assistant: 2 },
  LanguageModelChatToolMode: { Auto: 1, Required: 2 },
};

export function createFakeLm(providers: Map<string, unknown>) {
  return {
    LanguageModelTextPart, LanguageModelToolCallPart, LanguageModelToolResultPart, LanguageModelPromptTsxPart, CancellationError,
    ...lmEnums,
    lm: {
      registerLanguageModelChatProvider(vendor: string, provider: unknown) {
        if (providers.has(vendor)) throw new Error(`a provider for ${vendor} is already registered`);
        providers.set(vendor, provider);
        return { dispose: () => { providers.delete(vendor); } };
      },
    },
  };
}
