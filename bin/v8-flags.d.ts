export declare const V8_FLAGS: readonly string[];
