// ChatGLM3's history format, shared by the Triton request builder, the conversation store and the webview protocol.

export type ChatRole = 'system' | 'user' | 'assistant' | 'observation';

/** One message as ChatGLM3's tokenizer builds it: `<|role|>` + metadata + "\n" + content. */
export interface ChatMessage {
  role: ChatRole;
  content: string;
  metadata?: string;
}

/** What the model is asked for one turn (the I/O contract of triton/README.md). */
export interface ChatRequest {
  prompt: string;
  history: ChatMessage[];
  temperature?: number;
  topP?: number;
  /** 0 = off; absent = the model's default (its checkpoint's, else 50). */
  topK?: number;
  /** 1 = off. */
  repetitionPenalty?: number;
  /** Same seed and settings, same answer (native engine); absent = random. */
  seed?: number;
  maxNewTokens?: number;
  /** Turns (user + assistant pairs) of history the model keeps; 0 keeps none. Absent: all that fit. */
  historyLen?: number;
}

export type FinishReason = 'stop' | 'length' | 'cancelled';

/** Events of one streamed answer: deltas, then exactly one `final`. Errors are thrown by the stream. */
export type ChatStreamEvent =
  | { type: 'delta'; text: string }
  | {
      type: 'final';
      finishReason: FinishReason;
      promptTokens: number;
      completionTokens: number;
      /** Messages dropped from the oldest end of the history to fit the model's input-token budget. */
      historyTrimmed: number;
      history: ChatMessage[];
    };
